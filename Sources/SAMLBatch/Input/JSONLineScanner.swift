import NIOCore
import SAMLEncoding

#if canImport(Glibc)
import Glibc
#endif

/// Takes one JSON Lines record apart: the response field is unescaped straight into the chunk's
/// payload storage, every other member is copied verbatim (it was syntax-checked) into the
/// record's `meta` object, and a string `mvpd` member is kept to pick the trust for `--verify`.
///
/// Keys are matched as a JSON parser reads them, after unescaping (`"mvp\u0064"` is `mvpd`), and
/// a record that repeats a key is refused: whatever reads the output must see the same fields
/// this scanner acted on.
struct JSONLineScanner {
    /// The field holding the response (`--field`).
    let field: [UInt8]
    private static let mvpdKey: [UInt8] = Array("mvpd".utf8)
    /// The current record's keys (storage reused from record to record).
    private var keys = JSONKeySet()

    init(field: String) {
        self.field = Array(field.utf8)
    }

    /// What a record carries besides the response.
    struct Carried {
        /// The other members as one JSON object.
        var meta: String
        var mvpd: String?
    }

    /// Scans `line`; on success the response value has been appended to `payload`.
    mutating func scan(_ line: UnsafeRawBufferPointer, payload: inout ByteBuffer) throws(RecordError) -> Carried {
        keys.removeAll()
        var i = 0
        JSONSyntax.skipWhitespace(line, &i)
        guard i < line.count, line[i] == UInt8(ascii: "{") else { throw JSONSyntax.error("the line is not a JSON object", at: i) }
        i += 1
        var meta: [UInt8] = [UInt8(ascii: "{")]
        var mvpd: String?
        var found = false
        JSONSyntax.skipWhitespace(line, &i)
        if i < line.count, line[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                JSONSyntax.skipWhitespace(line, &i)
                guard i < line.count, line[i] == 0x22 else { throw JSONSyntax.error("expected a key", at: i) }
                let keyStart = i
                let (keyEnd, keyEscaped) = try JSONSyntax.endOfString(line, from: i)
                let key = try keys.insert(line, string: keyStart..<keyEnd, escaped: keyEscaped)
                i = keyEnd
                JSONSyntax.skipWhitespace(line, &i)
                guard i < line.count, line[i] == UInt8(ascii: ":") else { throw JSONSyntax.error("expected ':'", at: i) }
                i += 1
                JSONSyntax.skipWhitespace(line, &i)
                let valueStart = i
                if key.elementsEqual(field) {
                    guard valueStart < line.count else { throw JSONSyntax.error("missing value", at: valueStart) }
                    guard line[valueStart] == 0x22 else {
                        throw RecordError(.missingField, "the field \(String(decoding: field, as: UTF8.self)) is not a string")
                    }
                    let (end, escaped) = try JSONSyntax.endOfString(line, from: valueStart)
                    let content = (valueStart + 1)..<(end - 1)
                    var failure: RecordError?
                    payload.writeWithUnsafeMutableBytes(minimumWritableBytes: content.count) { region in
                        if !escaped {
                            if !content.isEmpty {
                                region.baseAddress!.copyMemory(from: line.baseAddress! + content.lowerBound, byteCount: content.count)
                            }
                            return content.count
                        }
                        do throws(RecordError) {
                            return try JSONSyntax.unescape(line, content, into: region)
                        } catch {
                            failure = error
                            return 0
                        }
                    }
                    if let failure { throw failure }
                    found = true
                    i = end
                } else {
                    i = try JSONSyntax.endOfValue(line, from: valueStart)
                    if meta.count > 1 { meta.append(UInt8(ascii: ",")) }
                    meta.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[keyStart..<keyEnd]))
                    meta.append(UInt8(ascii: ":"))
                    meta.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[valueStart..<i]))
                    if key.elementsEqual(Self.mvpdKey), line[valueStart] == 0x22 {
                        mvpd = try JSONSyntax.string(line, valueStart..<i)
                    }
                }
                JSONSyntax.skipWhitespace(line, &i)
                guard i < line.count else { throw JSONSyntax.error("unterminated object", at: i) }
                if line[i] == UInt8(ascii: "}") {
                    i += 1
                    break
                }
                guard line[i] == UInt8(ascii: ",") else { throw JSONSyntax.error("expected ',' or '}'", at: i) }
                i += 1
            }
        }
        JSONSyntax.skipWhitespace(line, &i)
        guard i == line.count else { throw JSONSyntax.error("text after the object", at: i) }
        guard found else {
            throw RecordError(.missingField, "no \(String(decoding: field, as: UTF8.self)) field in the record")
        }
        meta.append(UInt8(ascii: "}"))
        guard UTF8Check.isValid(meta) else { throw RecordError(.invalidJSON, "the record's other fields are not valid UTF-8") }
        return Carried(meta: String(decoding: meta, as: UTF8.self), mvpd: mvpd)
    }
}

/// Whether carried bytes are valid UTF-8 (they are copied verbatim into JSON output).
enum UTF8Check {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validator.firstInvalidOffset(in: $0) == nil }
    }
}
