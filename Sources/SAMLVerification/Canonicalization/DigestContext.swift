import CXMLSec

/// One OpenSSL digest context, reused digest after digest (``CanonicalBuffer/beginDigest(_:)``
/// streams canonical bytes into it); freed with its owner. Belongs to one thread.
final class DigestContext {
    let pointer: OpaquePointer

    /// `nil` when OpenSSL cannot allocate one.
    init?() {
        guard let pointer = cxmlsec_digest_ctx_new() else { return nil }
        self.pointer = pointer
    }

    deinit {
        cxmlsec_digest_ctx_free(pointer)
    }

    /// Starts a new `algorithm` digest; `false` when OpenSSL cannot.
    func begin(_ algorithm: cxmlsec_digest) -> Bool {
        cxmlsec_digest_begin(pointer, algorithm) == 0
    }

    /// Adds `bytes`; `false` when OpenSSL fails.
    func update(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        cxmlsec_digest_update(pointer, bytes.baseAddress, bytes.count) == 0
    }

    /// Writes the digest into `out` (64 bytes at least) and returns its length; `nil` on failure.
    func finish(into out: UnsafeMutablePointer<UInt8>) -> Int? {
        let length = cxmlsec_digest_finish(pointer, out)
        return length > 0 ? Int(length) : nil
    }

    /// The digest as bytes; `nil` on failure.
    func finish() -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 64)
        let length = out.withUnsafeMutableBufferPointer { finish(into: $0.baseAddress!) }
        return length.map { Array(out.prefix($0)) }
    }
}
