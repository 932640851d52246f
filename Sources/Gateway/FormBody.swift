import SAMLEncoding

#if canImport(Glibc)
import Glibc
#endif

/// Parses `application/x-www-form-urlencoded` bodies without copying values.
///
/// Values are decoded on demand (`+` is a space, `%XX` a byte) — once, which is the "one
/// form-decoding of the body" after which a `SAMLResponse` value is raw, base64 or encoded.
public enum FormBody {
    /// Splits `body` into fields. A name that appears twice is refused for the names in
    /// `unique` (parameter pollution: the backend might read the other copy).
    public static func parse(_ body: UnsafeRawBufferPointer, unique: Set<String>) throws(GatewayError) -> [FormField] {
        var fields: [FormField] = []
        var start = 0
        let count = body.count
        while start <= count {
            let end = offset(of: UInt8(ascii: "&"), in: body, from: start, to: count)
            if end > start {
                let equals = offset(of: UInt8(ascii: "="), in: body, from: start, to: end)
                let nameBytes = UnsafeRawBufferPointer(rebasing: body[start..<equals])
                let name = try decodeText(nameBytes, field: "(parameter name)")
                let valueStart = min(equals + 1, end)
                if unique.contains(name), fields.contains(where: { $0.name == name }) {
                    throw GatewayError.invalidParameter(name, "given more than once")
                }
                fields.append(FormField(name: name, pair: start..<end, value: valueStart..<end))
            }
            start = end + 1
        }
        return fields
    }

    /// The offset of the first `byte` in `body[from..<to]`, or `to`. (memchr: the scan over an
    /// 11 KB `SAMLResponse` value is the bulk of parsing a form.)
    static func offset(of byte: UInt8, in body: UnsafeRawBufferPointer, from: Int, to: Int) -> Int {
        guard from < to, let base = body.baseAddress, let found = memchr(base + from, Int32(byte), to - from) else { return to }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Form-decodes `value` into `output` (at least `value.count` bytes); returns the length.
    public static func decode(
        _ value: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, field: String
    ) throws(GatewayError) -> Int {
        do throws(SAMLEncodingError) {
            return try PercentEncoding.decode(value, into: output, plusAsSpace: true)
        } catch {
            throw GatewayError(error, parameter: field)
        }
    }

    /// Form-decodes a short text value (names, ids) into a `String`; invalid UTF-8 is refused.
    public static func decodeText(_ value: UnsafeRawBufferPointer, field: String) throws(GatewayError) -> String {
        guard !value.isEmpty else { return "" }
        var bytes = [UInt8](repeating: 0, count: value.count)
        let decoded: Result<Int, GatewayError> = bytes.withUnsafeMutableBytes { output in
            do throws(GatewayError) {
                return .success(try decode(value, into: output, field: field))
            } catch {
                return .failure(error)
            }
        }
        let length = try decoded.get()
        guard let text = String(validating: bytes[..<length], as: UTF8.self) else {
            throw GatewayError(SAMLEncodingError(.invalidUTF8, "not valid UTF-8"), parameter: field)
        }
        return text
    }
}
