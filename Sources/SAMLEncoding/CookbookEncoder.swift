import NIOCore

/// The fused cookbook pipeline: validate UTF-8, normalize whitespace, base64, percent-encode —
/// from raw bytes into one caller-provided region, with no intermediate `String`, `Data` or
/// `Array` and no allocation of its own.
///
/// The output region doubles as scratch: the normalized bytes are written behind the space
/// reserved for the result and encoded from there to its front, so one reservation of
/// ``requiredCapacity(forInputCount:)`` bytes is all a call needs.
public enum CookbookEncoder {
    /// Upper bound of the encoded length of `count` input bytes: base64 makes 4 of every 3, and
    /// percent-encoding at most triples each of those.
    @inlinable
    public static func maximumEncodedCount(_ count: Int) -> Int { (count + 2) / 3 * 12 }

    /// Bytes the output region of ``encode(_:stage:into:)-(_,_,UnsafeMutableRawBufferPointer)``
    /// must hold: the result plus scratch for the normalized input.
    @inlinable
    public static func requiredCapacity(forInputCount count: Int) -> Int {
        maximumEncodedCount(count) + count
    }

    /// Runs the cookbook on `input` up to `stage` and writes the result to the front of `output`.
    /// Returns the number of result bytes; the rest of `output` is scratch and undefined.
    ///
    /// - Throws: `invalid_utf8` (with the offset of the first bad byte) for input a Swift `String`
    ///   could not hold.
    /// - Precondition: `output.count >= requiredCapacity(forInputCount: input.count)`; no overlap.
    public static func encode(
        _ input: UnsafeRawBufferPointer, stage: CookbookStage = .encoded,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> Int {
        precondition(output.count >= requiredCapacity(forInputCount: input.count), "output buffer too small")
        guard let dst = output.baseAddress else { return 0 }
        if stage == .normalized {
            return try WhitespaceNormalizer.normalizeValidating(input, into: output)
        }
        let scratchStart = maximumEncodedCount(input.count)
        let scratch = UnsafeMutableRawBufferPointer(rebasing: output[scratchStart...])
        let normalized = try WhitespaceNormalizer.normalizeValidating(input, into: scratch)
        let normalizedBytes = UnsafeRawBufferPointer(rebasing: scratch[..<normalized])
        if stage == .base64 {
            return Base64.encode(normalizedBytes, into: output)
        }
        return encodeNormalized(normalizedBytes, into: dst)
    }

    /// Base64 and percent-encoding in one pass over already-normalized bytes.
    ///
    /// Only the base64 characters `+` (62), `/` (63) and the `=` padding are escaped, so a group of
    /// four characters whose 6-bit values are all below 62 is stored as one 32-bit word.
    /// Invariant: `src[0..<i]` is encoded in `dst[0..<o]`, `i` a multiple of 3.
    @usableFromInline
    static func encodeNormalized(_ input: UnsafeRawBufferPointer, into dst: UnsafeMutableRawPointer) -> Int {
        guard let src = input.baseAddress else { return 0 }
        let table = Base64.alphabet.utf8Start
        let count = input.count
        var i = 0
        var o = 0
        @inline(__always) func put(_ sextet: UInt32) {
            if sextet < 62 {
                dst.storeBytes(of: table[Int(sextet)], toByteOffset: o, as: UInt8.self)
                o += 1
            } else {
                // "%2B" for '+', "%2F" for '/'.
                dst.storeBytes(of: UInt8(ascii: "%"), toByteOffset: o, as: UInt8.self)
                dst.storeBytes(of: UInt8(ascii: "2"), toByteOffset: o + 1, as: UInt8.self)
                dst.storeBytes(of: sextet == 62 ? UInt8(ascii: "B") : UInt8(ascii: "F"), toByteOffset: o + 2, as: UInt8.self)
                o += 3
            }
        }
        @inline(__always) func putChar(_ c: UInt8) {
            if c == UInt8(ascii: "+") {
                put(62)
            } else if c == UInt8(ascii: "/") {
                put(63)
            } else {
                dst.storeBytes(of: c, toByteOffset: o, as: UInt8.self)
                o += 1
            }
        }
        @inline(__always) func putPad() {
            dst.storeBytes(of: UInt8(ascii: "%"), toByteOffset: o, as: UInt8.self)
            dst.storeBytes(of: UInt8(ascii: "3"), toByteOffset: o + 1, as: UInt8.self)
            dst.storeBytes(of: UInt8(ascii: "D"), toByteOffset: o + 2, as: UInt8.self)
            o += 3
        }
        Base64PairTable.entries.withUnsafeBufferPointer { pairs in
            let t = pairs.baseAddress!
            // Six bytes in, eight characters out, while an 8-byte load stays inside the input.
            while i + 8 <= count {
                let word = UInt64(bigEndian: src.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let chars = Base64PairTable.encode48(word, t)
                // '+' is 0x2B and '/' is 0x2F: they differ only in bit 2, so masking it off and
                // comparing with 0x2B finds both; then the classic "has a zero byte" test.
                let x = (chars & 0xFBFB_FBFB_FBFB_FBFB) ^ 0x2B2B_2B2B_2B2B_2B2B
                if (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 == 0 {
                    dst.storeBytes(of: chars.littleEndian, toByteOffset: o, as: UInt64.self)
                    o += 8
                } else {
                    for k in 0..<8 { putChar(UInt8(truncatingIfNeeded: chars >> UInt64(8 * k))) }
                }
                i += 6
            }
        }
        while i + 3 <= count {
            let v =
                UInt32(src.load(fromByteOffset: i, as: UInt8.self)) << 16
                | UInt32(src.load(fromByteOffset: i + 1, as: UInt8.self)) << 8
                | UInt32(src.load(fromByteOffset: i + 2, as: UInt8.self))
            let a = v >> 18, b = v >> 12 & 63, c = v >> 6 & 63, d = v & 63
            // Adding 2 carries into bit 6 exactly for the values 62 and 63.
            if ((a &+ 2) | (b &+ 2) | (c &+ 2) | (d &+ 2)) & 64 == 0 {
                let quad =
                    UInt32(table[Int(a)]) | UInt32(table[Int(b)]) << 8
                    | UInt32(table[Int(c)]) << 16 | UInt32(table[Int(d)]) << 24
                dst.storeBytes(of: quad.littleEndian, toByteOffset: o, as: UInt32.self)
                o += 4
            } else {
                put(a)
                put(b)
                put(c)
                put(d)
            }
            i += 3
        }
        let rest = count - i
        if rest > 0 {
            let b0 = UInt32(src.load(fromByteOffset: i, as: UInt8.self))
            let b1 = rest == 2 ? UInt32(src.load(fromByteOffset: i + 1, as: UInt8.self)) : 0
            let v = b0 << 16 | b1 << 8
            put(v >> 18)
            put(v >> 12 & 63)
            if rest == 2 { put(v >> 6 & 63) } else { putPad() }
            putPad()
        }
        return o
    }

    static func invalidUTF8(at offset: Int, in input: UnsafeRawBufferPointer) -> SAMLEncodingError {
        let byte = input[offset]
        return SAMLEncodingError(
            .invalidUTF8,
            "byte 0x\(HexDigits.string(byte)) at offset \(offset) does not start a well-formed UTF-8 sequence",
            offset: offset)
    }
}

// MARK: - Stages

/// How far along the cookbook pipeline to go.
public enum CookbookStage: String, Sendable, CaseIterable {
    /// Whitespace-normalized UTF-8 (cookbook steps 1–3).
    case normalized
    /// Base64 of the normalized bytes (step 4).
    case base64
    /// Percent-encoded base64: the value the backend expects (step 5).
    case encoded
}

// MARK: - A value in any form

extension CookbookEncoder {
    /// Bytes the output region of ``encodeAnyForm(_:into:)-(_,UnsafeMutableRawBufferPointer)``
    /// must hold for a value of `count` bytes.
    @inlinable
    public static func requiredCapacity(forAnyFormCount count: Int) -> Int {
        maximumEncodedCount(count + 3) + count + 3
    }

    /// Brings a `SAMLResponse` value in any ``SAMLForm`` to the cookbook's encoded form, encoding
    /// it exactly once: raw XML is encoded; base64 and encoded values are decoded, checked to be
    /// XML, normalized unless the cookbook's normalization already produced them, and encoded
    /// again (so a value produced by the cookbook comes out unchanged, and base64 of un-normalized
    /// XML comes out as the cookbook would have made it; see
    /// ``WhitespaceNormalizer/normalizeValidating(_:decodedFrom:into:)``).
    ///
    /// Returns the detected form and the number of bytes written to the front of `output`.
    public static func encodeAnyForm(
        _ value: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> (form: SAMLForm, count: Int) {
        precondition(output.count >= requiredCapacity(forAnyFormCount: value.count), "output buffer too small")
        let form = try SAMLForm.detect(value)
        if form == .raw {
            return (form, try encode(value, into: output))
        }
        guard let dst = output.baseAddress else { return (form, 0) }
        // Decode into scratch behind the largest possible result, then normalize in place there.
        let scratchStart = maximumEncodedCount(value.count + 3)
        let scratch = UnsafeMutableRawBufferPointer(rebasing: output[scratchStart...])
        let decoded = try CookbookDecoder.xml(of: value, form: form, scratch: scratch)
        // A document the cookbook's normalization already produced is kept: normalizing it again
        // could change it (the normalization is not idempotent).
        guard let normalizedCount = try WhitespaceNormalizer.normalizeValidating(decoded, decodedFrom: form, into: scratch) else {
            return (form, encodeNormalized(decoded, into: dst))
        }
        return (form, encodeNormalized(UnsafeRawBufferPointer(rebasing: scratch[..<normalizedCount]), into: dst))
    }

    /// Brings `value` to the cookbook's encoded form and appends it to `buffer`; returns the form
    /// it arrived in.
    @discardableResult
    public static func encodeAnyForm(
        _ value: UnsafeRawBufferPointer, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) -> SAMLForm {
        var result: Result<SAMLForm, SAMLEncodingError> = .success(.raw)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forAnyFormCount: value.count)) {
            output in
            do throws(SAMLEncodingError) {
                let (form, count) = try encodeAnyForm(value, into: output)
                result = .success(form)
                return count
            } catch {
                result = .failure(error)
                return 0
            }
        }
        return try result.get()
    }
}

// MARK: - ByteBuffer

extension CookbookEncoder {
    /// Runs the cookbook on `input` and appends the result to `buffer`, growing it at most once.
    ///
    /// When `buffer` already has ``requiredCapacity(forInputCount:)`` writable bytes, the call
    /// allocates nothing.
    public static func encode(
        _ input: UnsafeRawBufferPointer, stage: CookbookStage = .encoded, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forInputCount: input.count)) {
            output in
            do throws(SAMLEncodingError) {
                return try encode(input, stage: stage, into: output)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Base64 and percent-encoding only, appended to `buffer`: for bytes already normalized (or
    /// deliberately left as they are), which normalizing again could change — the cookbook's
    /// rule is not idempotent (`"a \n b"` becomes `"a  b"`, then `"a b"`).
    public static func encodeWithoutNormalizing(_ input: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumEncodedCount(input.count)) { output in
            guard let dst = output.baseAddress else { return 0 }
            return encodeNormalized(input, into: dst)
        }
    }

    /// Encodes a document decoded from a value that arrived in `form` and appends it to `buffer`:
    /// normalized as ``WhitespaceNormalizer/normalizeValidating(_:decodedFrom:into:)`` decides (a
    /// document the cookbook already normalized is kept byte for byte), then base64 and
    /// percent-encoded.
    public static func encode(
        _ xml: UnsafeRawBufferPointer, decodedFrom form: SAMLForm, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forInputCount: xml.count)) { output in
            guard let dst = output.baseAddress else { return 0 }
            let scratch = UnsafeMutableRawBufferPointer(rebasing: output[maximumEncodedCount(xml.count)...])
            do throws(SAMLEncodingError) {
                guard let count = try WhitespaceNormalizer.normalizeValidating(xml, decodedFrom: form, into: scratch) else {
                    return encodeNormalized(xml, into: dst)
                }
                return encodeNormalized(UnsafeRawBufferPointer(rebasing: scratch[..<count]), into: dst)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Runs the cookbook on the readable bytes of `input` and appends the result to `buffer`.
    public static func encode(
        _ input: ByteBuffer, stage: CookbookStage = .encoded, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        input.withUnsafeReadableBytes { bytes in
            do throws(SAMLEncodingError) {
                try encode(bytes, stage: stage, into: &buffer)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
