import SAMLEncoding

/// Whether carried bytes are valid UTF-8 (they are copied verbatim into JSON output).
enum UTF8Check {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validator.firstInvalidOffset(in: $0) == nil }
    }
}
