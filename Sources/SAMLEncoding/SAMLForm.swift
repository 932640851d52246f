/// The shape in which a `SAMLResponse` value arrives.
///
/// Clients send the VSA response raw, base64-encoded, or already in the cookbook's final form.
/// Knowing which lets us bring every one of them to the cookbook form exactly once — never
/// encoding an encoded value a second time.
public enum SAMLForm: String, Sendable, CaseIterable {
    /// XML text: the first byte that is neither whitespace nor a byte-order mark is `<`.
    case raw
    /// Base64 (standard alphabet, padded) of XML, not percent-encoded.
    case base64
    /// The cookbook's value: base64 of XML with `+`, `/`, `=` percent-encoded.
    case encoded
}

// MARK: - Detection

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
        while start < end, base.load(fromByteOffset: start, as: UInt8.self).isXMLWhitespace { start += 1 }
        while end > start, base.load(fromByteOffset: end - 1, as: UInt8.self).isXMLWhitespace { end -= 1 }
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
}

/// Decodes the first few bytes of a base64 stream, one character at a time, to tell whether it
/// is the start of XML — without a buffer or an allocation.
///
/// It keeps at most the first ``capacity`` decoded bytes in a fixed-size tuple.
struct PrefixSniffer {
    static let capacity = 48
    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    private var count = 0
    private var group: UInt32 = 0
    private var filled = 0
    private var ended = false

    /// Whether the sniffer has seen all it needs (its capacity, or the padding).
    var isFull: Bool { ended || count >= Self.capacity }

    /// Feeds one base64 character (alphabet or `=`).
    mutating func feed(_ c: UInt8) {
        guard !ended, count < Self.capacity else { return }
        let value = Base64.decodeValue(c)
        if value >= 64 {  // padding: flush what the group holds and stop
            let usable = filled - 1
            group <<= UInt32(6 * (4 - filled))
            for k in 0..<max(usable, 0) { append(UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * k))) }
            ended = true
            return
        }
        group = group << 6 | UInt32(value)
        filled += 1
        if filled == 4 {
            append(UInt8(truncatingIfNeeded: group >> 16))
            append(UInt8(truncatingIfNeeded: group >> 8))
            append(UInt8(truncatingIfNeeded: group))
            group = 0
            filled = 0
        }
    }

    private mutating func append(_ b: UInt8) {
        guard count < Self.capacity else { return }
        withUnsafeMutableBytes(of: &bytes) { $0[count] = b }
        count += 1
    }

    /// True when the decoded prefix has content that is not the start of an XML document.
    /// A prefix that is all whitespace is given the benefit of the doubt.
    var isDefinitelyNotXML: Bool {
        var copy = bytes
        let n = count
        return withUnsafeBytes(of: &copy) { raw in
            let prefix = UnsafeRawBufferPointer(rebasing: raw[..<n])
            if SAMLForm.startsLikeXML(prefix) { return false }
            guard let base = prefix.baseAddress else { return true }
            // All whitespace so far, around at most one BOM (or a BOM cut short): undecided, so
            // not "definitely not".
            var i = SAMLForm.skipTrimmable(base, from: 0, count: n)
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let rest = n - i
            if rest >= 3, prefix[i] == bom[0], prefix[i + 1] == bom[1], prefix[i + 2] == bom[2] {
                i = SAMLForm.skipTrimmable(base, from: i + 3, count: n)
                return i < n && !Self.startsTrimmableScalar(prefix, from: i)
            }
            if rest == 0 { return n == 0 }
            if rest < 3, (0..<rest).allSatisfy({ prefix[i + $0] == bom[$0] }) { return false }
            return !Self.startsTrimmableScalar(prefix, from: i)
        }
    }

    /// Whether the bytes from `i` to the end of `prefix` are the first one or two bytes of a
    /// multi-byte trimmable scalar that the prefix cut short: still whitespace as far as the
    /// prefix can tell. (Fuzz finding `encoding` #2: a document starting with a BOM and a run of
    /// U+2006 is raw, and its own encoded value must not be refused as "not XML".)
    static func startsTrimmableScalar(_ prefix: UnsafeRawBufferPointer, from i: Int) -> Bool {
        CookbookWhitespace.canBeginTrimmable(UnsafeRawBufferPointer(rebasing: prefix[i...]))
    }
}
