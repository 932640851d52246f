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
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                i += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), i + 1 < n else { return }
            let next = bytes[i + 1]
            if next == UInt8(ascii: "?") {
                guard let end = find(bytes, from: i + 2, "?>") else { return }
                if i + 5 < n && bytes[i + 2] == UInt8(ascii: "x") && bytes[i + 3] == UInt8(ascii: "m") && bytes[i + 4] == UInt8(ascii: "l")
                    && isBlank(bytes[i + 5])
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
        while i < n && (isBlank(declaration[i]) || declaration[i] == UInt8(ascii: "=")) { i += 1 }
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

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
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
