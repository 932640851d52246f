import CXMLSec

// MARK: - CanonicalBuffer

/// The bytes ``ExclusiveCanonicalizer`` writes: one growable buffer per thread, reused for
/// every canonicalization (a reference's content, then a `SignedInfo`), so the hot path
/// allocates nothing once it has grown to the largest document seen.
///
/// While a digest is attached (``beginDigest(_:)``) the buffer is only a window: whenever the
/// next write would not fit, what it holds goes to the digest and it starts over. A reference
/// is then hashed as it is written, in pieces of the buffer's size, and never held whole — the
/// thread's memory does not grow with the document.
///
/// The escaping helpers are the three of Canonical XML (and libxml2's `xmlC11NNormalize…`):
/// text escapes `& < > CR`; attribute values escape `& < " TAB LF CR`; comments and
/// processing instructions escape only `CR`.
final class CanonicalBuffer {
    /// A buffer grown past this is given back after use, so one huge document does not pin
    /// its size for the thread's lifetime.
    private static let retainedCapacity = 256 * 1024

    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// The digest the bytes go to, or `nil` (the bytes stay here: a `SignedInfo`).
    private var digest: DigestContext?
    /// A digest update failed: the digest is not to be trusted.
    private var digestFailed = false

    init(capacity: Int = 16 * 1024) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deallocate()
    }

    /// Empties the buffer, shrinking it first when a large document made it grow.
    func reset() {
        count = 0
        if capacity > Self.retainedCapacity {
            base.deallocate()
            capacity = 16 * 1024
            base = .allocate(capacity: capacity)
        }
    }

    var bytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base, count: count)
    }

    /// Empties the buffer and sends everything written from now on to `digest` (begun by its
    /// owner), until ``finishDigest()``.
    func beginDigest(_ digest: DigestContext) {
        reset()
        self.digest = digest
        digestFailed = false
    }

    /// Sends what is left to the digest and detaches it; `false` when an update failed.
    func finishDigest() -> Bool {
        flush()
        digest = nil
        return !digestFailed
    }

    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity {
            makeRoom(for: extra)
        }
    }

    /// Hands the bytes to the digest when one is attached, else (or when `extra` alone does not
    /// fit) grows the buffer.
    private func makeRoom(for extra: Int) {
        if digest != nil {
            flush()
            if extra <= capacity { return }
        }
        grow(to: count + extra)
    }

    private func flush() {
        guard let digest, count > 0 else { return }
        if !digest.update(UnsafeBufferPointer(start: base, count: count)) {
            digestFailed = true
        }
        count = 0
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed {
            newCapacity *= 2
        }
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        fresh.update(from: base, count: count)
        base.deallocate()
        base = fresh
        capacity = newCapacity
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ start: UnsafePointer<UInt8>, count length: Int) {
        guard length > 0 else { return }
        if digest != nil && length > capacity {
            hashDirectly(start, count: length)
            return
        }
        reserve(length)
        (base + count).update(from: start, count: length)
        count += length
    }

    /// A write longer than the whole window (a long text run) while a digest is attached: what
    /// the window holds, then these bytes, straight to the digest — the buffer never grows to a
    /// document's size.
    private func hashDirectly(_ start: UnsafePointer<UInt8>, count length: Int) {
        flush()
        if let digest, !digest.update(UnsafeBufferPointer(start: start, count: length)) {
            digestFailed = true
        }
    }

    @inline(__always)
    func append(_ literal: StaticString) {
        append(literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// A NUL-terminated string, unescaped (names, prefixes, namespace URIs already checked).
    func append(cString: UnsafePointer<xmlChar>) {
        append(cString, count: Int(xmlStrlen(cString)))
    }

    /// Character data: `&` `<` `>` and CR escaped.
    func appendText(_ text: UnsafePointer<xmlChar>) {
        appendEscaped(text, .text)
    }

    /// An attribute value: `&` `<` `"` TAB LF CR escaped (`>` is not).
    func appendAttributeValue(_ value: UnsafePointer<xmlChar>) {
        appendEscaped(value, .attribute)
    }

    /// Comment or processing-instruction content: only CR escaped.
    func appendMarkupContent(_ content: UnsafePointer<xmlChar>) {
        appendEscaped(content, .markup)
    }

    private enum Context {
        case text, attribute, markup
    }

    /// Copies runs of bytes that need no escaping in one go; every escaped byte is ASCII below
    /// `?`, so most bytes cost a single comparison.
    @inline(__always)
    private func appendEscaped(_ string: UnsafePointer<xmlChar>, _ context: Context) {
        var p = string
        var run = p
        while true {
            let byte = p.pointee
            if byte == 0 { break }
            if byte <= UInt8(ascii: ">"), let replacement = Self.replacement(for: byte, in: context) {
                append(run, count: p - run)
                append(replacement)
                run = p + 1
            }
            p += 1
        }
        append(run, count: p - run)
    }

    @inline(__always)
    private static func replacement(for byte: UInt8, in context: Context) -> StaticString? {
        switch (byte, context) {
        case (UInt8(ascii: "\r"), _): return "&#xD;"
        case (UInt8(ascii: "&"), .text), (UInt8(ascii: "&"), .attribute): return "&amp;"
        case (UInt8(ascii: "<"), .text), (UInt8(ascii: "<"), .attribute): return "&lt;"
        case (UInt8(ascii: ">"), .text): return "&gt;"
        case (UInt8(ascii: "\""), .attribute): return "&quot;"
        case (UInt8(ascii: "\t"), .attribute): return "&#x9;"
        case (UInt8(ascii: "\n"), .attribute): return "&#xA;"
        default: return nil
        }
    }
}

// MARK: - DigestContext

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
