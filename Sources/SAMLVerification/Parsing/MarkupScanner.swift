#if canImport(Glibc)
import Glibc
#endif

/// Counts attributes and namespace declarations per start tag, the declarations in scope and the
/// depth (a stack of per-element counts, pushed by a start tag, popped by an end tag), and all
/// markup items against the document's size, with one lexical pass over the bytes before
/// libxml2 sees them; refuses a document past ``MarkupLimits``.
///
/// The lexer knows exactly the contexts in which `<` and quotes mean something different —
/// comments, CDATA sections, processing instructions and quoted attribute values — so on a
/// well-formed document it sees the start tags libxml2 will parse. libxml2 does *not* stop at
/// its first error (without `RECOVER` it only stops building the tree, and goes on parsing, a
/// `<` inside an attribute value starting a new start tag), so wherever the two could part the
/// scanner refuses the document itself (`malformed_xml`): `<` inside an attribute value or a
/// tag, a quote in an end tag, a tag, quote, comment, CDATA section or processing instruction
/// left open at the end. Every attribute has exactly one quoted value, so a start tag's
/// attributes are counted by its opening quotes.
/// Linear: each byte is looked at a bounded number of times; `<` in text is found by `memchr`.
enum MarkupScanner {
    /// - Parameter maxDepth: the deepest element nesting (`too_deep`), checked here so that a
    ///   deep document costs no parse at all.
    static func check(_ bytes: UnsafeRawBufferPointer, limits: MarkupLimits, maxDepth: Int) throws(VerificationError) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        let itemBudget = limits.markupItems(forByteCount: n)
        var items = 0
        func count(at offset: Int) throws(VerificationError) {
            items += 1
            if items > itemBudget {
                throw VerificationError(
                    .tooManyNodes,
                    "more than \(itemBudget) elements, attributes, comments and processing instructions in \(n) bytes (at byte \(offset))")
            }
        }
        // Declarations of each open element, and their sum.
        var open: [Int] = []
        var inScope = 0
        var i = 0
        // Invariant: bytes[..<i] is fully lexed and within the limits; bytes[i] is in text.
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else { return }
            i = base.distance(to: UnsafeRawPointer(found)) + 1
            guard i < n else { return }
            try count(at: i)
            switch bytes[i] {
            case UInt8(ascii: "!"):
                if matches(bytes, i + 1, "--") {
                    i = try skip(bytes, past: "-->", from: i + 3)
                } else if matches(bytes, i + 1, "[CDATA[") {
                    i = try skip(bytes, past: "]]>", from: i + 8)
                } else {
                    i = try skip(bytes, past: ">", from: i + 1)
                }
            case UInt8(ascii: "?"):
                i = try skip(bytes, past: "?>", from: i + 1)
            case UInt8(ascii: "/"):
                items -= 1  // an end tag is part of its element
                let end = try skip(bytes, past: ">", from: i + 1)
                for j in i..<end where bytes[j] == 0x3C || bytes[j] == 0x22 || bytes[j] == 0x27 {
                    throw malformed(at: j)
                }
                i = end
                inScope -= open.popLast() ?? 0
            default:
                var attributes = 0
                var local = 0
                var nameStart = -1
                var atBlank = false
                var closed = false
                while i < n {
                    let byte = bytes[i]
                    if byte == UInt8(ascii: ">") {
                        if bytes[i - 1] != UInt8(ascii: "/") {
                            open.append(local)
                            inScope += local
                            guard open.count <= maxDepth else {
                                throw VerificationError(.tooDeep, "elements nest deeper than \(maxDepth) levels (at byte \(i))")
                            }
                        }
                        i += 1
                        closed = true
                        break
                    }
                    if byte == 0x22 || byte == 0x27 {
                        try count(at: i)
                        if nameStart >= 0 && isNamespaceDeclaration(bytes, from: nameStart) {
                            local += 1
                            guard local <= limits.namespaceDeclarationsPerElement else {
                                throw VerificationError(
                                    .tooManyNamespaces,
                                    "an element declares more than \(limits.namespaceDeclarationsPerElement) namespaces (at byte \(i))")
                            }
                            guard inScope + local <= limits.namespaceDeclarationsInScope else {
                                throw VerificationError(
                                    .tooManyNamespaces,
                                    "more than \(limits.namespaceDeclarationsInScope) namespace declarations in scope (at byte \(i))")
                            }
                        } else {
                            attributes += 1
                            guard attributes <= limits.attributesPerElement else {
                                throw VerificationError(
                                    .tooManyAttributes, "an element has more than \(limits.attributesPerElement) attributes (at byte \(i))")
                            }
                        }
                        guard let close = memchr(base + i + 1, Int32(byte), n - i - 1) else { throw malformed(at: i) }
                        let end = base.distance(to: UnsafeRawPointer(close))
                        if let lt = memchr(base + i + 1, 0x3C, end - i - 1) {
                            throw malformed(at: base.distance(to: UnsafeRawPointer(lt)))
                        }
                        i = end + 1
                        nameStart = -1
                        atBlank = true
                        continue
                    }
                    if byte == 0x3C { throw malformed(at: i) }
                    if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                        atBlank = true
                    } else if atBlank && byte != UInt8(ascii: "=") {
                        nameStart = i
                        atBlank = false
                    }
                    i += 1
                }
                if !closed { throw malformed(at: n) }
            }
        }
    }

    private static func malformed(at offset: Int) -> VerificationError {
        VerificationError(.malformedXML, "not well-formed XML (markup at byte \(offset))")
    }

    /// `xmlns` or `xmlns:…` at `start`, up to `=` or a blank.
    private static func isNamespaceDeclaration(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        guard matches(bytes, start, "xmlns"), start + 5 < bytes.count else { return false }
        let next = bytes[start + 5]
        return next == UInt8(ascii: ":") || next == UInt8(ascii: "=") || next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D
    }

    /// The index just past the first `terminator` at or after `from`; a construct left open at
    /// the end is refused.
    private static func skip(_ bytes: UnsafeRawBufferPointer, past terminator: StaticString, from: Int) throws(VerificationError) -> Int {
        let count = terminator.utf8CodeUnitCount
        let first = terminator.utf8Start.pointee
        guard let base = bytes.baseAddress else { throw malformed(at: from) }
        var i = from
        while i + count <= bytes.count {
            guard let found = memchr(base + i, Int32(first), bytes.count - i) else { break }
            i = base.distance(to: UnsafeRawPointer(found))
            if matches(bytes, i, terminator) { return i + count }
            i += 1
        }
        throw malformed(at: from)
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
