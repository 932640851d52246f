extension SAMLForm {
    /// Tells which form `value` is in, without decoding all of it.
    ///
    /// Surrounding ASCII whitespace (a trailing newline in a file, say) is ignored for the
    /// base64 forms. A base64 value is recognised only if its first bytes decode to the start of
    /// an XML document; the complete decoding is checked again by whoever decodes it.
    ///
    /// - Throws: `double_encoded` when an escape decodes to `%` (`%25…`), otherwise
    ///   `unrecognized_saml_form` (or `malformed_percent_encoding`) naming the offending offset.
    public static func detect(_ value: UnsafeRawBufferPointer) throws(SAMLEncodingError) -> SAMLForm {
        if startsLikeXML(value) { return .raw }
        guard let base = value.baseAddress, !value.isEmpty else {
            throw SAMLEncodingError(.unrecognizedSAMLForm, "the value is empty or only whitespace")
        }
        var start = 0
        var end = value.count
        while start < end, isASCIIWhitespace(base.load(fromByteOffset: start, as: UInt8.self)) { start += 1 }
        while end > start, isASCIIWhitespace(base.load(fromByteOffset: end - 1, as: UInt8.self)) { end -= 1 }
        guard start < end else {
            throw SAMLEncodingError(.unrecognizedSAMLForm, "the value is empty or only whitespace")
        }

        // The first characters are checked one by one and decoded to sniff for XML; after the
        // sniffer is full only the escapes are looked at (a fast scan for '%'): the rest of the
        // alphabet is checked by the decoder, which reports the exact offset.
        var hasEscape = false
        var prefix = PrefixSniffer()
        var i = start
        while i < end {
            if prefix.isFull, i + 8 <= end {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let x = word ^ 0x2525_2525_2525_2525
                if (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            var c = base.load(fromByteOffset: i, as: UInt8.self)
            let at = i
            if c == UInt8(ascii: "%") {
                guard i + 2 < end,
                    let hi = HexDigits.value(base.load(fromByteOffset: i + 1, as: UInt8.self)),
                    let lo = HexDigits.value(base.load(fromByteOffset: i + 2, as: UInt8.self))
                else {
                    throw SAMLEncodingError(
                        .malformedPercentEncoding, "'%' at offset \(i) is not followed by two hex digits", offset: i)
                }
                c = hi << 4 | lo
                hasEscape = true
                i += 3
                if c == UInt8(ascii: "%") {
                    throw SAMLEncodingError(
                        .doubleEncoded, "the value is percent-encoded twice ('%25' at offset \(at))", offset: at)
                }
            } else {
                i += 1
                if prefix.isFull { continue }
            }
            if Base64.decodeValue(c) < 64 || c == UInt8(ascii: "=") {
                prefix.feed(c)
            } else if c != 0x0A && c != 0x0D {
                throw SAMLEncodingError(
                    .unrecognizedSAMLForm,
                    "byte 0x\(HexDigits.string(c)) at offset \(at) is neither XML nor base64", offset: at)
            }
        }
        if prefix.isDefinitelyNotXML {
            throw SAMLEncodingError(.unrecognizedSAMLForm, "the value is base64 but does not decode to XML")
        }
        return hasEscape ? .encoded : .base64
    }

    /// Whether `bytes` start like an XML document: `<` after cookbook whitespace, with at most
    /// one byte-order mark among that whitespace (before it, or before and after it: files saved
    /// on Windows start with a BOM and then often a line break before the XML).
    ///
    /// The bytes are not changed here: the value is encoded as it is, BOM included, exactly as
    /// `samlgate encode` encodes it, and whoever verifies it verifies the same bytes.
    public static func startsLikeXML(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var i = skipTrimmable(base, from: 0, count: count)
        if i + 3 < count, base.load(fromByteOffset: i, as: UInt8.self) == 0xEF,
            base.load(fromByteOffset: i + 1, as: UInt8.self) == 0xBB,
            base.load(fromByteOffset: i + 2, as: UInt8.self) == 0xBF
        {
            i = skipTrimmable(base, from: i + 3, count: count)
        }
        return i < count && base.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "<")
    }

    /// The offset of the first byte from `i` on that does not start a trimmable scalar.
    @inline(__always)
    static func skipTrimmable(_ base: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        var i = start
        while i < count {
            let n = CookbookWhitespace.trimmableLength(base, at: i, end: count)
            if n == 0 { break }
            i += n
        }
        return i
    }

    @inline(__always)
    static func isASCIIWhitespace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D
    }
}
