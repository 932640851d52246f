import CXMLSec
import SAMLEncoding

/// Answers "does the signature still verify after the cookbook's whitespace normalization?",
/// since the backend receives the normalized form. Never rejects a response.
///
/// Exact, and cheap in the common cases, in three tiers:
/// 1. One byte scan classifies what normalization would change. Nothing, or only whitespace
///    around the root element (the usual newline after the XML declaration) → `true`.
/// 2. Changes only in character data (text, CDATA, prolog/epilog whitespace; none inside tags,
///    attribute values, comments or processing instructions, where a deleted newline can
///    change an attribute value or even make the document ill-formed): then only text inside
///    the verified content can matter. The verified tree is checked: if no text or CDATA node
///    inside a signed element (excluding that element's own `ds:Signature`, but including its
///    `SignedInfo`) contains a character normalization could touch, the canonical forms and
///    digests are unchanged and the base64 `SignatureValue` decodes the same → `true`.
/// 3. Otherwise the document is normalized into the thread's scratch buffer, parsed, checked
///    and verified again with the key that verified the original (the slow, exact path, taken
///    by pretty-printed documents).
enum NormalizationProbe {
    enum Change {
        case none
        /// Only whitespace before or after the root element changes.
        case outsideRoot
        case characterDataOnly
        case markup
    }

    static func survives(_ bytes: UnsafeRawBufferPointer, structure: ResponseStructure, expected: SignedElementKind, key: TrustedKey,
                         algorithms: AlgorithmPolicy, maxDepth: Int, context: VerificationThreadContext) -> Bool {
        switch classify(bytes) {
        case .none, .outsideRoot:
            return true
        case .characterDataOnly:
            var touched = false
            if expected != .response { touched = touched || signedTextMayChange(structure.assertion, signature: structure.assertionSignature) }
            if expected != .assertion { touched = touched || signedTextMayChange(structure.response, signature: structure.responseSignature) }
            if !touched { return true }
        case .markup:
            break
        }
        return reverify(bytes, expected: expected, key: key, algorithms: algorithms, maxDepth: maxDepth, context: context)
    }

    /// The exact answer: normalize, parse, verify again.
    static func reverify(_ bytes: UnsafeRawBufferPointer, expected: SignedElementKind, key: TrustedKey,
                         algorithms: AlgorithmPolicy, maxDepth: Int, context: VerificationThreadContext) -> Bool {
        var scratch = context.scratch
        context.scratch = []
        defer { context.scratch = scratch }
        if scratch.count < bytes.count {
            scratch = [UInt8](repeating: 0, count: bytes.count)
        }
        return scratch.withUnsafeMutableBytes { output -> Bool in
            let written = WhitespaceNormalizer.normalize(bytes, into: output)
            let normalized = UnsafeRawBufferPointer(rebasing: output[..<written])
            do {
                let document = try SecureXMLParser.parse(normalized, context: context)
                let structure = try ResponseStructure(document: document, maxDepth: maxDepth)
                var probe = algorithms
                probe.retryWithLibxml2 = false
                let outcome = try Verifier.verifySignatures(structure, document, keys: [key], algorithms: probe, context: context)
                return outcome.kind == expected
            } catch {
                return false
            }
        }
    }

    /// Whether `text` (UTF-8) holds a character the normalizer could rewrite: a tab, LF, VT,
    /// FF, CR, NEL, LS, PS, or two spaces in a row. (Conservative: a character reference such
    /// as `&#10;` shows up here too although its source bytes do not change.)
    @inline(__always)
    static func mayChange(_ text: UnsafePointer<xmlChar>) -> Bool {
        var p = text
        var previousSpace = false
        while true {
            let byte = p.pointee
            if byte == 0 { return false }
            if byte >= 0x09 && byte <= 0x0D { return true }
            if byte == 0x20 {
                if previousSpace { return true }
                previousSpace = true
            } else {
                previousSpace = false
                if byte == 0xC2 && p[1] == 0x85 { return true }
                if byte == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9) { return true }
            }
            p += 1
        }
    }

    /// Whether any character data that the signature over `element` covers may change:
    /// every text/CDATA node in its subtree, except inside its own `signature` where only
    /// `SignedInfo` counts.
    static func signedTextMayChange(_ element: XMLTree.Node, signature: XMLTree.Node?) -> Bool {
        var node: UnsafeMutablePointer<xmlNode>? = element.pointee.children
        // Pre-order walk bounded by `element`. Invariant: every node before `node` in document
        // order inside `element` was checked or deliberately skipped.
        while let current = node {
            var descend = true
            switch current.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content, mayChange(content) { return true }
                descend = false
            case XML_ELEMENT_NODE:
                if current == signature {
                    if let signedInfo = XMLTree.firstChildElement(current), signedTextMayChange(signedInfo, signature: nil) {
                        return true
                    }
                    descend = false
                }
            default:
                descend = false
            }
            if descend, let child = current.pointee.children {
                node = child
                continue
            }
            var cursor: UnsafeMutablePointer<xmlNode>? = current
            node = nil
            while let c = cursor, c != element {
                if let next = c.pointee.next {
                    node = next
                    break
                }
                cursor = c.pointee.parent
            }
        }
        return false
    }

    /// The usual shapes without the byte-by-byte state machine: an optional XML declaration,
    /// blanks (tab, LF, CR, space) around the root, and nothing normalization could touch in
    /// the declaration or from the root's `<` to its last `>`. `nil`: classify exactly.
    static func quickClassify(_ bytes: UnsafeRawBufferPointer) -> Change? {
        let n = bytes.count
        var start = 0
        var end = n
        if n > 5, bytes[0] == 0x3C, bytes[1] == 0x3F, bytes[2] == 0x78, bytes[3] == 0x6D, bytes[4] == 0x6C { // "<?xml"
            var k = 5
            while k + 1 < n && k < 256 && !(bytes[k] == 0x3F && bytes[k + 1] == 0x3E) { k += 1 }
            guard k + 1 < n, k < 256, !mayNeedNormalization(UnsafeRawBufferPointer(rebasing: bytes[0..<(k + 2)])) else { return nil }
            start = k + 2
        }
        let declarationEnd = start
        while start < end && isBlank(bytes[start]) { start += 1 }
        while end > start && isBlank(bytes[end - 1]) { end -= 1 }
        guard start < end, bytes[start] == 0x3C, !mayNeedNormalization(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) else {
            return nil
        }
        return start > declarationEnd || end < n ? .outsideRoot : Change.none
    }

    @inline(__always)
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// A word-at-a-time pre-scan: `false` proves normalization changes nothing (no byte in
    /// 0x00–0x0D, no byte ≥ 0x80 — which covers NEL, LS and PS —, no two spaces in a row, no
    /// space at either end). Compact ASCII documents, the common case, stop here after about
    /// two instructions per byte; anything else is classified exactly.
    static func mayNeedNormalization(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return false }
        if bytes[0] == 0x20 || bytes[n - 1] == 0x20 { return true }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var previousSpace: UInt64 = 0 // high bit of the last byte of the previous word
        var i = 0
        while i + 8 <= n {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            // Any byte >= 0x80, or < 0x0E (borrow test, exact once high bytes are ruled out).
            if word & highs != 0 || (word &- ones &* 0x0E) & ~word & highs != 0 { return true }
            // Exact "byte == 0x20" mask in the high bit of each byte.
            let x = word ^ (ones &* 0x20)
            let spaces = ~(((x & lows) &+ lows) | x) & highs
            if spaces & ((spaces << 8) | previousSpace) != 0 { return true }
            previousSpace = spaces >> 56
            i += 8
        }
        var lastWasSpace = previousSpace != 0
        while i < n {
            let byte = bytes[i]
            if byte >= 0x80 || byte < 0x0E { return true }
            if byte == 0x20 {
                if lastWasSpace { return true }
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            i += 1
        }
        return false
    }

    /// Byte classes for ``classify(_:)``.
    private static let blank: UInt8 = 1       // 0x09–0x0D, 0x20: may be rewritten
    private static let openAngle: UInt8 = 2        // <
    private static let close: UInt8 = 4       // >
    private static let quoteMark: UInt8 = 8   // " '
    private static let lead: UInt8 = 16       // 0xC2, 0xE2: may start NEL / LS / PS
    private static let dash: UInt8 = 32       // -
    private static let question: UInt8 = 64   // ?
    private static let bracket: UInt8 = 128   // ]

    private static let byteClass: [UInt8] = (0..<256).map { b -> UInt8 in
        switch b {
        case 0x09...0x0D, 0x20: return blank
        case 0x3C: return openAngle
        case 0x3E: return close
        case 0x22, 0x27: return quoteMark
        case 0xC2, 0xE2: return lead
        case 0x2D: return dash
        case 0x3F: return question
        case 0x5D: return bracket
        default: return 0
        }
    }

    /// Classifies what ``WhitespaceNormalizer`` would change: nothing, only character data
    /// (text, CDATA, whitespace around the root), or something inside markup. One pass; the
    /// inner loop skips ordinary bytes with one table lookup each.
    static func classify(_ bytes: UnsafeRawBufferPointer) -> Change {
        quickClassify(bytes) ?? exactClassify(bytes)
    }

    /// One pass of a small lexical state machine over every byte.
    static func exactClassify(_ bytes: UnsafeRawBufferPointer) -> Change {
        enum State { case text, tag, comment, processingInstruction, cdata }
        let n = bytes.count
        guard n > 0 else { return .none }
        return byteClass.withUnsafeBufferPointer { table -> Change in
            var state = State.text
            var quote: UInt8 = 0
            var changed = false
            var firstTag = -1
            var changeAfterFirstTag = false
            var changeInsideRoot = false
            var i = 0
            // Invariant: `state` is the lexical context of bytes[i]; `changed` records a change
            // in character data before i; a change inside markup returns at once.
            while i < n {
                let mask: UInt8
                switch state {
                case .text: mask = blank | openAngle | lead
                case .cdata: mask = blank | lead | bracket
                case .tag: mask = blank | lead | close | quoteMark
                case .comment: mask = blank | lead | dash
                case .processingInstruction: mask = blank | lead | question
                }
                while i < n && table[Int(bytes[i])] & mask == 0 { i += 1 }
                guard i < n else { break }
                let byte = bytes[i]
                let kind = table[Int(byte)]
                if kind == blank || kind == lead {
                    let change: Bool
                    if kind == lead {
                        change = (byte == 0xC2 && i + 1 < n && bytes[i + 1] == 0x85)
                            || (byte == 0xE2 && i + 2 < n && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9))
                    } else if byte == 0x20 {
                        change = i == 0 || i == n - 1 || bytes[i + 1] == 0x20 || bytes[i + 1] == 0x09
                    } else {
                        change = true
                    }
                    if change {
                        if state == .text || state == .cdata {
                            changed = true
                            if firstTag >= 0 { changeAfterFirstTag = true }
                        } else {
                            return .markup
                        }
                    }
                    i += 1
                    continue
                }
                switch state {
                case .text:
                    // byte == "<"
                    if matches(bytes, i + 1, "!--") {
                        state = .comment
                        i += 4
                    } else if matches(bytes, i + 1, "![CDATA[") {
                        state = .cdata
                        i += 9
                    } else if i + 1 < n && bytes[i + 1] == UInt8(ascii: "?") {
                        state = .processingInstruction
                        i += 2
                    } else {
                        state = .tag
                        quote = 0
                        if firstTag < 0 { firstTag = i }
                        i += 1
                    }
                case .tag:
                    if quote != 0 {
                        if byte == quote { quote = 0 }
                    } else if kind == quoteMark {
                        quote = byte
                    } else if byte == UInt8(ascii: ">") {
                        state = .text
                        // After the root element starts, only its own end tag closes a tag
                        // outside it: a change followed by a tag close is inside the root.
                        if changeAfterFirstTag { changeInsideRoot = true }
                    }
                    i += 1
                case .cdata, .comment, .processingInstruction:
                    let terminator: StaticString = state == .cdata ? "]]>" : state == .comment ? "-->" : "?>"
                    if matches(bytes, i, terminator) {
                        state = .text
                        i += terminator.utf8CodeUnitCount
                    } else {
                        i += 1
                    }
                }
            }
            guard changed else { return .none }
            return changeInsideRoot ? .characterDataOnly : .outsideRoot
        }
    }

    @inline(__always)
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ pattern: StaticString) -> Bool {
        let count = pattern.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        let p = pattern.utf8Start
        for j in 0..<count where bytes[at + j] != p[j] {
            return false
        }
        return true
    }
}
