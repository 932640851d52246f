import NIOCore
import SAMLEncoding

/// Base64 then percent-encoding, without the cookbook's whitespace normalization: the
/// `signature-preserving` forward form, for responses whose signature the normalization breaks.
enum UnnormalizedEncoder {
    static func encode(_ xml: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        let base64 = UnsafeMutableRawBufferPointer.allocate(byteCount: Base64.encodedCount(xml.count), alignment: 16)
        defer { base64.deallocate() }
        let count = Base64.encode(xml, into: base64)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: PercentEncoding.maximumEncodedCount(count)) { output in
            PercentEncoding.encode(UnsafeRawBufferPointer(rebasing: base64[..<count]), into: output)
        }
    }
}
