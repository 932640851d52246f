import SAMLEncoding

#if canImport(Glibc)
import Glibc
#endif

/// Parses `application/x-www-form-urlencoded` bodies without copying values.
///
/// Values are decoded on demand (`+` is a space, `%XX` a byte) — once, which is the "one
/// form-decoding of the body" after which a `SAMLResponse` value is raw, base64 or encoded.
@_spi(Benchmarks) public enum FormBody {
    /// The most fields an exchange form may have.
    public static let maximumFields = 64

    /// Splits `body` into fields. Refused, so that no form parser behind the gateway can read
    /// the body differently (parameter pollution):
    /// - a name in `unique` given twice — the backend might read the other copy — or spelled any
    ///   other way that some parser reads as that name (``ParameterName``: `samlresponse`,
    ///   `+SAMLResponse`, `SAMLResponse[]`, `SAML%52esponse` once more), with
    ///   `duplicate_parameter`: in one pass, each name folded once;
    /// - a raw `;` anywhere: form encoders escape it, and some parsers split fields on it; an
    ///   escaped `&`, `;` or `=` in a name (`x%26SAMLResponse`): parsers that decode before they
    ///   split would read another field there, and no form encoder writes one.
    /// - a name holding a control character (C0 or DEL) or a non-ASCII character, when it does
    ///   not already read as a field of `unique` (then `duplicate_parameter`), with
    ///   `invalid_parameter_value`: parsers disagree about them (C stops at a NUL, Java's `trim()`
    ///   strips one, full case folding reads `reque%EF%AC%86or` as `requestor`, NFKC reads `𝐒` as
    ///   `S`), and the names of an exchange form are ASCII words.
    /// - a body of more than `maximumFields` fields (an exchange has about seven; the limit keeps
    ///   a 1 MB body of `a&a&…` from costing half a million field decodings).
    /// - Parameter unique: the names given at most once: each name's key (its lower-case bytes,
    ///   as ``ParameterName/fold(encoded:into:)`` folds it) and the name as it must be spelled.
    public static func parse(
        _ body: UnsafeRawBufferPointer, unique: [(key: [UInt8], name: String)]
    ) throws(GatewayError) -> [FormField] {
        if offset(of: UInt8(ascii: ";"), in: body, from: 0, to: body.count) != body.count {
            throw GatewayError(
                status: 400, code: .invalidParameterValue,
                message: "the form body holds a raw `;` (escape it as %3B): some parsers split fields on it",
                details: [("parameter", .string("(body)"))])
        }
        var fields: [FormField] = []
        var seen: Set<String> = []
        var key: [UInt8] = []
        var start = 0
        let count = body.count
        while start <= count {
            let end = offset(of: UInt8(ascii: "&"), in: body, from: start, to: count)
            if end > start {
                let equals = offset(of: UInt8(ascii: "="), in: body, from: start, to: end)
                let nameBytes = UnsafeRawBufferPointer(rebasing: body[start..<equals])
                let name = try decodeText(nameBytes, field: "(parameter name)")
                let valueStart = min(equals + 1, end)
                guard fields.count < maximumFields else {
                    throw GatewayError(
                        status: 400, code: .invalidParameterValue, message: "the form has more than \(maximumFields) fields",
                        details: [("parameter", .string("(body)"))])
                }
                if name.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "=") }) {
                    throw GatewayError(
                        status: 400, code: .invalidParameterValue,
                        message: "a field name holds an escaped `&`, `;` or `=`: parsers that decode before they split would read other fields",
                        details: [("parameter", .string("(parameter name)"))])
                }
                if ParameterName.fold(encoded: nameBytes, into: &key),
                    let canonical = unique.first(where: { $0.key == key })?.name
                {
                    guard canonical == name else { throw duplicate(canonical, spelled: false) }
                    guard seen.insert(canonical).inserted else { throw duplicate(canonical, spelled: true) }
                }
                if name.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) {
                    throw GatewayError(
                        status: 400, code: .invalidParameterValue,
                        message: "a field name holds a control or non-ASCII character: form parsers read such names differently",
                        details: [("parameter", .string("(parameter name)"))])
                }
                fields.append(FormField(name: name, pair: start..<end, value: valueStart..<end))
            }
            start = end + 1
        }
        return fields
    }

    /// `duplicate_parameter`, naming the field the gateway reads (never the client's spelling).
    private static func duplicate(_ canonical: String, spelled: Bool, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 400, code: .duplicateParameter,
            message: spelled
                ? "the field \(canonical) is given more than once"
                : "a field name reads as \(canonical) to some form parsers (letter case, blanks, a [] suffix, an escape): "
                    + "give \(canonical) once, spelled so",
            details: [("parameter", .string(canonical))], fileID: fileID, line: line)
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

/// One `name=value` pair of an `application/x-www-form-urlencoded` body, as byte ranges into
/// the body (still encoded), so fields the gateway does not change are forwarded byte for byte.
@_spi(Benchmarks) public struct FormField: Sendable {
    /// The decoded name (names are short; values stay as ranges).
    public let name: String
    /// The whole `name=value` pair.
    public let pair: Range<Int>
    /// The encoded value.
    public let value: Range<Int>
}
