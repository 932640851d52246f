#if canImport(Glibc)
import Glibc
#endif

/// Counts attributes and namespace declarations per start tag, and the declarations in scope
/// (a stack of per-element counts, pushed by a start tag, popped by an end tag), with one
/// lexical pass over the bytes before libxml2 sees them; refuses a document past ``MarkupLimits``.
///
/// The lexer knows exactly the contexts in which `<` and quotes mean something different —
/// comments, CDATA sections, processing instructions and quoted attribute values — so on a
/// well-formed document it sees the start tags libxml2 will parse; on a malformed one libxml2
/// stops at the first error, no later than where the two could part. Every attribute has exactly
/// one quoted value, so a start tag's attributes are counted by its opening quotes.
/// Linear: each byte is looked at a bounded number of times; `<` in text is found by `memchr`.
enum MarkupScanner {
    static func check(_ bytes: UnsafeRawBufferPointer, limits: MarkupLimits) throws(VerificationError) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        // Declarations of each open element, and their sum.
        var open: [Int] = []
        var inScope = 0
        var i = 0
        // Invariant: bytes[..<i] is fully lexed and within the limits; bytes[i] is in text.
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else { return }
            i = base.distance(to: UnsafeRawPointer(found)) + 1
            guard i < n else { return }
            switch bytes[i] {
            case UInt8(ascii: "!"):
                if matches(bytes, i + 1, "--") {
                    i = skip(bytes, past: "-->", from: i + 3)
                } else if matches(bytes, i + 1, "[CDATA[") {
                    i = skip(bytes, past: "]]>", from: i + 8)
                } else {
                    i = skip(bytes, past: ">", from: i + 1)
                }
            case UInt8(ascii: "?"):
                i = skip(bytes, past: "?>", from: i + 1)
            case UInt8(ascii: "/"):
                i = skip(bytes, past: ">", from: i + 1)
                inScope -= open.popLast() ?? 0
            default:
                var attributes = 0
                var local = 0
                var nameStart = -1
                var atBlank = false
                while i < n {
                    let byte = bytes[i]
                    if byte == UInt8(ascii: ">") {
                        if bytes[i - 1] != UInt8(ascii: "/") {
                            open.append(local)
                            inScope += local
                        }
                        i += 1
                        break
                    }
                    if byte == 0x22 || byte == 0x27 {
                        if nameStart >= 0 && isNamespaceDeclaration(bytes, from: nameStart) {
                            local += 1
                            guard local <= limits.namespaceDeclarationsPerElement else {
                                throw VerificationError(.tooManyNamespaces, "an element declares more than \(limits.namespaceDeclarationsPerElement) namespaces (at byte \(i))")
                            }
                            guard inScope + local <= limits.namespaceDeclarationsInScope else {
                                throw VerificationError(.tooManyNamespaces, "more than \(limits.namespaceDeclarationsInScope) namespace declarations in scope (at byte \(i))")
                            }
                        } else {
                            attributes += 1
                            guard attributes <= limits.attributesPerElement else {
                                throw VerificationError(.tooManyAttributes, "an element has more than \(limits.attributesPerElement) attributes (at byte \(i))")
                            }
                        }
                        guard let close = memchr(base + i + 1, Int32(byte), n - i - 1) else { return }
                        i = base.distance(to: UnsafeRawPointer(close)) + 1
                        nameStart = -1
                        atBlank = true
                        continue
                    }
                    if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                        atBlank = true
                    } else if atBlank && byte != UInt8(ascii: "=") {
                        nameStart = i
                        atBlank = false
                    }
                    i += 1
                }
            }
        }
    }

    /// `xmlns` or `xmlns:…` at `start`, up to `=` or a blank.
    private static func isNamespaceDeclaration(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        guard matches(bytes, start, "xmlns"), start + 5 < bytes.count else { return false }
        let next = bytes[start + 5]
        return next == UInt8(ascii: ":") || next == UInt8(ascii: "=") || next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D
    }

    /// The index just past the first `terminator` at or after `from`, or the end.
    private static func skip(_ bytes: UnsafeRawBufferPointer, past terminator: StaticString, from: Int) -> Int {
        let count = terminator.utf8CodeUnitCount
        let first = terminator.utf8Start.pointee
        guard let base = bytes.baseAddress else { return bytes.count }
        var i = from
        while i + count <= bytes.count {
            guard let found = memchr(base + i, Int32(first), bytes.count - i) else { return bytes.count }
            i = base.distance(to: UnsafeRawPointer(found))
            if matches(bytes, i, terminator) { return i + count }
            i += 1
        }
        return bytes.count
    }

    @inline(__always)
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ pattern: StaticString) -> Bool {
        let count = pattern.utf8CodeUnitCount
        guard at >= 0, at + count <= bytes.count else { return false }
        let p = pattern.utf8Start
        for j in 0..<count where bytes[at + j] != p[j] {
            return false
        }
        return true
    }
}
