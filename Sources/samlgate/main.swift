import SAMLEncoding
import NIOCore
var b = ByteBuffer()
try! Array("\u{FEFF}<a/>".utf8).withUnsafeBytes { try CookbookEncoder.encode($0, into: &b) }
print(String(buffer: b))
