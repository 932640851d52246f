import FuzzSupport
import SAMLEncoding

/// Target `encoding`.
///
/// Invariant, on any bytes as a `SAMLResponse` value:
/// - form detection and the any-form encoder never double-encode: when `encodeAnyForm` accepts a
///   value, its output is detected as `encoded` (or `base64`, when no byte needed escaping), and
///   encoding that output again gives it back unchanged (finding #1 in docs/robustness.md: the
///   cookbook's normalization is not idempotent, so a decoded document it already produced must
///   not be normalized again);
/// - decoding the output gives the cookbook normalization of the value's XML (the value itself
///   when raw, its one decoding otherwise), or that decoding unchanged when the normalization can
///   produce it — `WhitespaceNormalizer.isNormalizationResult` agrees with a check on Unicode
///   scalars written here;
/// - the fused encoder (`CookbookEncoder.encode`) equals a plain stage-by-stage reference written
///   here (normalize, then a textbook base64, then the cookbook's percent-encoding of `+ / =`),
///   and fails exactly when the input is not UTF-8.
@main
enum EncodingTarget {
    static func main() {
        FuzzDriver.run { data, size in EncodingTarget.testOne(data, size) }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// A textbook base64 followed by the cookbook's percent-encoding (on base64 text only `+ / =` change).
    static func reference(_ normalized: [UInt8]) -> [UInt8] {
        var b64: [UInt8] = []
        var index = 0
        while index < normalized.count {
            let chunk = Array(normalized[index..<min(index + 3, normalized.count)])
            let n = chunk.count
            let value = (UInt32(chunk[0]) << 16) | (n > 1 ? UInt32(chunk[1]) << 8 : 0) | (n > 2 ? UInt32(chunk[2]) : 0)
            b64.append(alphabet[Int((value >> 18) & 63)])
            b64.append(alphabet[Int((value >> 12) & 63)])
            b64.append(n > 1 ? alphabet[Int((value >> 6) & 63)] : UInt8(ascii: "="))
            b64.append(n > 2 ? alphabet[Int(value & 63)] : UInt8(ascii: "="))
            index += 3
        }
        var out: [UInt8] = []
        for byte in b64 {
            switch byte {
            case UInt8(ascii: "+"): out += Array("%2B".utf8)
            case UInt8(ascii: "/"): out += Array("%2F".utf8)
            case UInt8(ascii: "="): out += Array("%3D".utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    static func normalized(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(input.count, 1))
        guard let count = out.withUnsafeMutableBytes({ try? WhitespaceNormalizer.normalizeValidating(input, into: $0) }) else { return nil }
        return Array(out[..<count])
    }

    static let tabAndNewlines: Set<UInt32> = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029]
    static let trimmable: Set<UInt32> = tabAndNewlines.union([0x20, 0xA0, 0x1680, 0x202F, 0x205F, 0x3000]).union(0x2000...0x200B)

    /// Whether the cookbook's normalization can produce `bytes`, on Unicode scalars: valid UTF-8,
    /// no tab or newline anywhere, nothing trimmable at either end.
    static func isNormalizationResult(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        let scalars = text.unicodeScalars
        if scalars.contains(where: { tabAndNewlines.contains($0.value) }) { return false }
        if let first = scalars.first, trimmable.contains(first.value) { return false }
        if let last = scalars.last, trimmable.contains(last.value) { return false }
        return true
    }

    static func fused(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: CookbookEncoder.requiredCapacity(forInputCount: input.count) + 1)
        guard let count = out.withUnsafeMutableBytes({ try? CookbookEncoder.encode(input, into: $0) }) else { return nil }
        return Array(out[..<count])
    }

    static func anyForm(_ value: UnsafeRawBufferPointer) -> (form: SAMLForm, bytes: [UInt8])? {
        var out = [UInt8](repeating: 0, count: CookbookEncoder.requiredCapacity(forAnyFormCount: value.count) + 1)
        guard let (form, count) = out.withUnsafeMutableBytes({ try? CookbookEncoder.encodeAnyForm(value, into: $0) }) else { return nil }
        return (form, Array(out[..<count]))
    }

    static func decoded(_ value: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(value.count, 4) + 3)
        guard let count = value.withUnsafeBytes({ raw in out.withUnsafeMutableBytes { try? CookbookDecoder.decode(raw, into: $0) } }) else {
            return nil
        }
        return Array(out[..<count])
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = FuzzDriver.input(data, size)

        // The fused encoder against the plain reference.
        let plainNormalized = normalized(input)
        let fusedOutput = fused(input)
        if (plainNormalized == nil) != (fusedOutput == nil) { FuzzFailure.violated("fused encoder and validation disagree on UTF-8") }
        if let plainNormalized, let fusedOutput, fusedOutput != reference(plainNormalized) {
            FuzzFailure.violated("fused encoder differs from the plain reference (\(fusedOutput.count) vs \(reference(plainNormalized).count) bytes)")
        }

        // Any form: exactly one encoding.
        guard let (form, output) = anyForm(input) else { return 0 }
        if let detected = try? SAMLForm.detect(input), detected != form { FuzzFailure.violated("encodeAnyForm reports another form than detect") }
        let xml: [UInt8]
        if form == .raw {
            xml = Array(input)
        } else {
            guard let once = decoded(Array(input)) else { FuzzFailure.violated("an accepted \(form) value does not decode") }
            xml = once
        }
        if String(validating: xml, as: UTF8.self) != nil,
            xml.withUnsafeBytes({ WhitespaceNormalizer.isNormalizationResult($0) }) != isNormalizationResult(xml)
        {
            FuzzFailure.violated("isNormalizationResult disagrees with the check on scalars")
        }
        let expected: [UInt8]? = form != .raw && isNormalizationResult(xml) ? xml : xml.withUnsafeBytes { normalized($0) }
        guard let back = decoded(output) else { FuzzFailure.violated("the any-form output does not decode") }
        if back != expected {
            FuzzFailure.violated("decoding the output is not the normalized XML (\(back.count) vs \(expected?.count ?? -1) bytes)")
        }
        guard let again = output.withUnsafeBytes({ anyForm($0) }) else { FuzzFailure.violated("the any-form output is refused when sent again") }
        if again.form == .raw { FuzzFailure.violated("the any-form output is detected as raw") }
        if again.bytes != output { FuzzFailure.violated("encoding the output again changes it") }
        return 0
    }
}
