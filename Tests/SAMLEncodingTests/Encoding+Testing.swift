import NIOCore
import SAMLEncoding

/// Small adapters so tests can call the byte-level API with `String`s and `[UInt8]`.
enum Fast {
    static func encode(_ bytes: [UInt8], stage: CookbookStage = .encoded) throws -> String {
        var buffer = ByteBuffer()
        try bytes.withUnsafeBytes { (raw) in
            try CookbookEncoder.encode(raw, stage: stage, into: &buffer)
        }
        return String(buffer: buffer)
    }

    static func encode(_ string: String, stage: CookbookStage = .encoded) throws -> String {
        try encode(Array(string.utf8), stage: stage)
    }

    static func decode(_ bytes: [UInt8]) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try bytes.withUnsafeBytes { (raw) in
            try CookbookDecoder.decode(raw, into: &buffer)
        }
        return Array(buffer.readableBytesView)
    }

    static func encodeAnyForm(_ bytes: [UInt8]) throws -> (SAMLForm, String) {
        var buffer = ByteBuffer()
        let form = try bytes.withUnsafeBytes { (raw) in
            try CookbookEncoder.encodeAnyForm(raw, into: &buffer)
        }
        return (form, String(buffer: buffer))
    }

    static func detect(_ string: String) throws -> SAMLForm {
        try Array(string.utf8).withUnsafeBytes { (raw) in try SAMLForm.detect(raw) }
    }
}
