import SAMLEncoding
import SAMLVerification

#if canImport(Glibc)
import Glibc
#endif

/// A fast well-formedness screen for encode-only runs: one root element, tags balanced and
/// matching by name, nothing cut off inside a tag, comment, CDATA section or attribute value,
/// no text outside the root. It catches the broken captures (truncated, spliced, mangled)
/// without paying for a libxml2 parse; `--verify` parses for real.
///
/// Entities and character data are not checked, and a DOCTYPE is only skipped: the verifier
/// refuses those documents on its own terms when `--verify` is on.
struct XMLShapeCheck {
    /// Open element names, as ranges into the document; reused between documents.
    private var open: [Range<Int>] = []

    init() {}

    mutating func check(_ xml: UnsafeRawBufferPointer) throws(RecordError) {
        open.removeAll(keepingCapacity: true)
        guard let base = xml.baseAddress else { throw Self.failure("the document is empty", at: 0) }
        let count = xml.count
        var i = 0
        if count >= 3, xml[0] == 0xEF, xml[1] == 0xBB, xml[2] == 0xBF { i = 3 }
        var seenRoot = false

        func find(_ needle: StaticString, from: Int) -> Int? {
            let length = needle.utf8CodeUnitCount
            var at = from
            while at + length <= count, let hit = memchr(base + at, Int32(needle.utf8Start.pointee), count - at) {
                let offset = UnsafeRawPointer(hit) - base
                if offset + length > count { return nil }
                if memcmp(base + offset, needle.utf8Start, length) == 0 { return offset }
                at = offset + 1
            }
            return nil
        }
        func isNameEnd(_ c: UInt8) -> Bool {
            c.isXMLWhitespace || c == UInt8(ascii: ">") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
        }

        while true {
            let lt: Int? = i < count ? memchr(base + i, 0x3C, count - i).map { UnsafeRawPointer($0) - base } : nil
            if open.isEmpty {
                // Between the prolog's pieces and after the root only whitespace may stand (the
                // cookbook's trimmable set includes Unicode spaces: non-ASCII bytes pass here).
                var j = i
                while j < (lt ?? count) {
                    let c = xml[j]
                    guard (0x09...0x0D).contains(c) || c == 0x20 || c >= 0x80 else {
                        throw Self.failure("text outside the root element", at: j)
                    }
                    j += 1
                }
            }
            guard let lt else { break }
            var j = lt + 1
            guard j < count else { throw Self.failure("the document ends inside a tag", at: lt) }
            switch xml[j] {
            case UInt8(ascii: "?"):
                guard let end = find("?>", from: j) else { throw Self.failure("unterminated processing instruction", at: lt) }
                i = end + 2
            case UInt8(ascii: "!"):
                if j + 2 < count, xml[j + 1] == UInt8(ascii: "-"), xml[j + 2] == UInt8(ascii: "-") {
                    guard let end = find("-->", from: j + 3) else { throw Self.failure("unterminated comment", at: lt) }
                    i = end + 3
                } else if j + 8 <= count, memcmp(base + j, "![CDATA[", 8) == 0 {
                    guard !open.isEmpty else { throw Self.failure("CDATA outside the root element", at: lt) }
                    guard let end = find("]]>", from: j + 8) else { throw Self.failure("unterminated CDATA section", at: lt) }
                    i = end + 3
                } else {
                    // DOCTYPE (or another declaration): skip to its '>' outside quotes and brackets.
                    guard !seenRoot else { throw Self.failure("a declaration inside the document", at: lt) }
                    var brackets = 0
                    var quote: UInt8 = 0
                    j += 1
                    while j < count {
                        let c = xml[j]
                        if quote != 0 {
                            if c == quote { quote = 0 }
                        } else if c == 0x22 || c == 0x27 {
                            quote = c
                        } else if c == UInt8(ascii: "[") {
                            brackets += 1
                        } else if c == UInt8(ascii: "]") {
                            brackets -= 1
                        } else if c == UInt8(ascii: ">"), brackets <= 0 {
                            break
                        }
                        j += 1
                    }
                    guard j < count else { throw Self.failure("unterminated declaration", at: lt) }
                    i = j + 1
                }
            case UInt8(ascii: "/"):
                j += 1
                let nameStart = j
                while j < count, !isNameEnd(xml[j]) { j += 1 }
                let name = nameStart..<j
                while j < count, xml[j].isXMLWhitespace { j += 1 }
                guard j < count, xml[j] == UInt8(ascii: ">") else { throw Self.failure("the document ends inside an end tag", at: lt) }
                guard let opened = open.popLast() else { throw Self.failure("an end tag without a start tag", at: lt) }
                guard opened.count == name.count, memcmp(base + opened.lowerBound, base + name.lowerBound, name.count) == 0 else {
                    throw Self.failure("an end tag does not match its start tag", at: lt)
                }
                i = j + 1
            default:
                let nameStart = j
                while j < count, !isNameEnd(xml[j]) { j += 1 }
                guard j > nameStart else { throw Self.failure("a tag without a name", at: lt) }
                let name = nameStart..<j
                if open.isEmpty {
                    guard !seenRoot else { throw Self.failure("a second root element", at: lt) }
                    seenRoot = true
                }
                // Attributes: name, '=', a quoted value; then '>' or '/>'.
                var selfClosing = false
                attributes: while true {
                    while j < count, xml[j].isXMLWhitespace { j += 1 }
                    guard j < count else { throw Self.failure("the document ends inside a start tag", at: lt) }
                    switch xml[j] {
                    case UInt8(ascii: ">"):
                        break attributes
                    case UInt8(ascii: "/"):
                        guard j + 1 < count, xml[j + 1] == UInt8(ascii: ">") else { throw Self.failure("a stray '/' in a start tag", at: j) }
                        selfClosing = true
                        j += 1
                        break attributes
                    default:
                        let attributeStart = j
                        while j < count, !isNameEnd(xml[j]) { j += 1 }
                        guard j > attributeStart else { throw Self.failure("a malformed attribute", at: j) }
                        while j < count, xml[j].isXMLWhitespace { j += 1 }
                        guard j < count, xml[j] == UInt8(ascii: "=") else { throw Self.failure("an attribute without a value", at: attributeStart) }
                        j += 1
                        while j < count, xml[j].isXMLWhitespace { j += 1 }
                        guard j < count, xml[j] == 0x22 || xml[j] == 0x27 else { throw Self.failure("an attribute value without quotes", at: j) }
                        guard let close = memchr(base + j + 1, Int32(xml[j]), count - j - 1) else {
                            throw Self.failure("the document ends inside an attribute value", at: j)
                        }
                        j = UnsafeRawPointer(close) - base + 1
                    }
                }
                if !selfClosing { open.append(name) }
                i = j + 1
            }
        }
        guard seenRoot else { throw Self.failure("no root element", at: i) }
        guard open.isEmpty else { throw Self.failure("the document ends inside an element (truncated?)", at: count) }
    }

    private static func failure(_ what: String, at offset: Int) -> RecordError {
        RecordError(.malformedXML, "\(what) (byte \(offset))")
    }
}
