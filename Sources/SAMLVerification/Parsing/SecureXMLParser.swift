// Hardened parsing of untrusted bytes: the byte scans that run before libxml2 sees them (the
// prolog's DOCTYPE, the markup limits), libxml2's parse in its safest configuration, and the
// owner of the parsed tree.

import CXMLSec
import SAMLEncoding

#if canImport(Glibc)
import Glibc
#endif

// MARK: - SecureXMLParser

/// Parses untrusted bytes with libxml2 in its safest configuration.
///
/// Options: `XML_PARSE_NONET` (no network), `NOERROR`/`NOWARNING` (no stderr output from
/// worker threads). Never `NOENT` (it *enables* entity substitution), `DTDLOAD`, `DTDATTR`,
/// `HUGE` or `NOBLANKS` (which would change what was signed). `xmlSecParseMemory` is not used:
/// its defaults turn on entity substitution, DTD loading and HUGE. `COMPACT` keeps short text
/// (a few bytes: the indentation between elements) inside its node instead of a separate
/// allocation; the tree reads the same.
///
/// Limits: size is checked by the caller before any work; a DOCTYPE is refused by
/// ``PrologScanner`` before parsing and again on the tree; attributes and namespace
/// declarations are counted by ``MarkupScanner`` before parsing; depth beyond libxml2's own limit
/// of 256 (active without `HUGE`) fails the parse and is reported as `too_deep`; smaller
/// configured limits are enforced by ``ResponseStructure``.
enum SecureXMLParser {
    /// `IGNORE_ENC` with the encoding argument "UTF-8": the bytes are always read as UTF-8,
    /// whatever the XML declaration claims. A declared UTF-7 or BOM-less UTF-16 document would
    /// otherwise be decoded into markup (a DOCTYPE, say) that the byte-level prolog scan never
    /// saw, and what we verify would not be the bytes the backend receives.
    static let options: Int32 = Int32(
        bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue | XML_PARSE_IGNORE_ENC.rawValue | XML_PARSE_COMPACT.rawValue)

    static func parse(
        _ bytes: UnsafeRawBufferPointer, limits: MarkupLimits, maxDepth: Int,
        context: VerificationThreadContext
    ) throws(VerificationError) -> ParsedDocument {
        try PrologScanner.rejectDoctype(bytes)
        try MarkupScanner.check(bytes, limits: limits, maxDepth: maxDepth)
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw VerificationError(.malformedXML, "empty document")
        }
        guard bytes.count < Int(Int32.max) else {
            throw VerificationError(.tooLarge, "document exceeds 2 GiB")
        }
        // Inside an arena window the document gets a parser context of its own, from the arena:
        // the thread's context and its dictionary outlive the window and must never hold its memory.
        let parser: UnsafeMutablePointer<xmlParserCtxt>
        let ownsParser = VerificationArena.isActive
        if ownsParser {
            guard let fresh = xmlNewParserCtxt() else {
                throw VerificationError(.internalError, "cannot allocate a libxml2 parser context")
            }
            parser = fresh
        } else {
            context.recycleParserIfNeeded()
            parser = context.parser
        }
        defer {
            if ownsParser && !VerificationArena.holdsEverything { xmlFreeParserCtxt(parser) }
        }
        let doc = xmlCtxtReadMemory(parser, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, "UTF-8", options)
        guard let doc else {
            throw parseFailure(parser)
        }
        let parsed = ParsedDocument(doc)
        if doc.pointee.intSubset != nil || doc.pointee.extSubset != nil {
            throw VerificationError(.forbiddenDTD, "DOCTYPE declarations are not accepted")
        }
        // libxml2 reports an undeclared prefix (`<saml2:NameID>` with no `xmlns:saml2`) as a
        // recoverable namespace error and keeps the element, named `saml2:NameID`, in no
        // namespace: invisible to every namespace-aware check here, yet the `NameID` a
        // namespace-unaware reader (Java's default DOM, Go's encoding/xml) finds first.
        guard parser.pointee.nsWellFormed != 0 else {
            throw VerificationError(.malformedXML, "not namespace-well-formed XML (an undeclared prefix)")
        }
        return parsed
    }

    private static func parseFailure(_ parser: UnsafeMutablePointer<xmlParserCtxt>) -> VerificationError {
        guard let error = xmlCtxtGetLastError(parser) else {
            return VerificationError(.malformedXML, "not well-formed XML")
        }
        let code = error.pointee.code
        if code == Int32(XML_ERR_INTERNAL_ERROR.rawValue), let message = error.pointee.message,
            String(cString: message).hasPrefix("Excessive depth")
        {
            return VerificationError(.tooDeep, "elements nest deeper than 256 levels")
        }
        if code == Int32(XML_ERR_ENTITY_LOOP.rawValue) || code == Int32(XML_WAR_UNDECLARED_ENTITY.rawValue)
            || code == Int32(XML_ERR_UNDECLARED_ENTITY.rawValue)
        {
            return VerificationError(.forbiddenDTD, "entity references are not accepted")
        }
        return VerificationError(.malformedXML, "not well-formed XML (libxml2 error \(code) at line \(error.pointee.line))")
    }
}

// MARK: - ParsedDocument

/// Sole owner of one parsed libxml2 document; frees it when it goes out of scope (inside an
/// arena window that holds all of it, the window's end does: see ``VerificationArena``).
///
/// Non-copyable so that the document cannot outlive its owner or be freed twice, and
/// deliberately not `Sendable`: a document belongs to one request on one thread.
struct ParsedDocument: ~Copyable {
    let doc: UnsafeMutablePointer<xmlDoc>
    /// Parsed inside an arena window.
    private let inArena: Bool

    init(_ doc: UnsafeMutablePointer<xmlDoc>) {
        self.doc = doc
        inArena = VerificationArena.isActive
    }

    deinit {
        if !(inArena && VerificationArena.holdsEverything) {
            xmlFreeDoc(doc)
        }
    }

    /// The root element, if any.
    var root: UnsafeMutablePointer<xmlNode>? {
        xmlDocGetRootElement(doc)
    }
}

// MARK: - PrologScanner

/// Rejects a DOCTYPE before libxml2 parses it.
///
/// A document type declaration is the door to XXE, entity expansion ("billion laughs") and,
/// with libxmlsec1 1.2.37, to a crash in `xmlSecFindNode` on nested entities. SAML never
/// needs one, so the scanner reads the prolog (XML declaration, comments, processing
/// instructions, whitespace) and refuses any other `<!` markup before the root element.
/// It only looks at the prolog, so its cost does not grow with the document.
/// The parsed document is checked again for an internal or external subset afterwards.
enum PrologScanner {
    static func rejectDoctype(_ bytes: UnsafeRawBufferPointer) throws(VerificationError) {
        let n = bytes.count
        var i = 0
        if n >= 2 && ((bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE) || bytes[0] == 0) {
            throw VerificationError(.malformedXML, "only UTF-8 documents are accepted")
        }
        if n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            i = 3
        }
        // Invariant: bytes[..<i] is a well-formed prolog prefix without `<!` other than comments.
        while i < n {
            let byte = bytes[i]
            if byte.isXMLWhitespace {
                i += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), i + 1 < n else { return }
            let next = bytes[i + 1]
            if next == UInt8(ascii: "?") {
                guard let end = find(bytes, from: i + 2, "?>") else { return }
                if i + 5 < n && bytes[i + 2] == UInt8(ascii: "x") && bytes[i + 3] == UInt8(ascii: "m") && bytes[i + 4] == UInt8(ascii: "l")
                    && bytes[i + 5].isXMLWhitespace
                {
                    try checkDeclaredEncoding(UnsafeRawBufferPointer(rebasing: bytes[(i + 5)..<(end - 2)]))
                }
                i = end
            } else if next == UInt8(ascii: "!") {
                if i + 3 < n && bytes[i + 2] == UInt8(ascii: "-") && bytes[i + 3] == UInt8(ascii: "-") {
                    guard let end = find(bytes, from: i + 4, "-->") else { return }
                    i = end
                } else {
                    throw VerificationError(.forbiddenDTD, "DOCTYPE declarations are not accepted")
                }
            } else {
                return
            }
        }
    }

    /// The document is read as UTF-8 whatever it declares (``SecureXMLParser``), but it is
    /// forwarded with its declaration: a backend that honours `encoding="UTF-7"` would decode
    /// other markup than the gateway verified (text hidden in comments turns into elements). So
    /// a declared encoding other than UTF-8 is refused.
    ///
    /// Read on the bytes (no `String`, no Foundation): the first `encoding`, then blanks and `=`,
    /// a quote, and the value up to the same quote, compared with `utf-8` ignoring ASCII case.
    private static func checkDeclaredEncoding(_ declaration: UnsafeRawBufferPointer) throws(VerificationError) {
        guard var i = find(declaration, from: 0, "encoding") else { return }
        let n = declaration.count
        while i < n && (declaration[i].isXMLWhitespace || declaration[i] == UInt8(ascii: "=")) { i += 1 }
        guard i < n, declaration[i] == UInt8(ascii: "\"") || declaration[i] == UInt8(ascii: "'") else {
            throw VerificationError(.malformedXML, "the XML declaration's encoding is unreadable")
        }
        let quote = declaration[i]
        let start = i + 1
        var end = start
        while end < n && declaration[end] != quote { end += 1 }
        let expected: StaticString = "utf-8"
        var matches = end - start == expected.utf8CodeUnitCount
        var j = 0
        while matches && j < expected.utf8CodeUnitCount {
            let byte = declaration[start + j]
            let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            matches = lower == expected.utf8Start[j]
            j += 1
        }
        guard matches else {
            throw VerificationError(.malformedXML, "only UTF-8 documents are accepted (the XML declaration names another encoding)")
        }
    }

    /// Index just past the first occurrence of `needle` at or after `start`.
    private static func find(_ bytes: UnsafeRawBufferPointer, from start: Int, _ needle: StaticString) -> Int? {
        let count = needle.utf8CodeUnitCount
        let pattern = needle.utf8Start
        var i = start
        while i + count <= bytes.count {
            var j = 0
            while j < count && bytes[i + j] == pattern[j] { j += 1 }
            if j == count { return i + count }
            i += 1
        }
        return nil
    }
}

// MARK: - MarkupScanner

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
                    if byte.isXMLWhitespace {
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
        return next == UInt8(ascii: ":") || next == UInt8(ascii: "=") || next.isXMLWhitespace
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
