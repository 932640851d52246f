import Foundation
import NIOCore
import SAMLEncoding
import ServerSupport

/// Writes output records in the documented field order straight into the chunk's output
/// buffer, each once, from its settled ``RecordOutcome``: head, the encoded value copied as it
/// is (the cookbook alphabet `A–Z a–z 0–9 %` needs no escaping in JSON or CSV), tail.
struct RecordFormatter: Sendable {
    let format: OutputFormat
    let verify: Bool

    /// The CSV header line.
    var csvHeader: String {
        var columns = ["source", "form", "encoded", "bytesIn", "bytesOut", "error", "meta"]
        if verify { columns += ["valid", "issuer", "nameIDHash", "notOnOrAfter", "survivesNormalization"] }
        return columns.joined(separator: ",") + "\r\n"
    }

    /// Writes one record's output record, whole: head, encoded value, tail. Returns the encoded
    /// value's length.
    func write(_ outcome: RecordOutcome, of record: BatchRecord, into out: inout ByteBuffer) -> Int {
        switch outcome {
        case .encoded(let form, let value, let verification, let error):
            writeHead(&out, source: record.source, form: form, encoded: true)
            let bytesOut = out.writeImmutableBuffer(value)
            writeTail(
                &out, encoded: true, bytesIn: record.payload.count, bytesOut: bytesOut, error: error, meta: record.meta,
                verification: verification)
            return bytesOut
        case .failed(let form, let error):
            writeHead(&out, source: record.source, form: form, encoded: false)
            writeTail(
                &out, encoded: false, bytesIn: record.payload.count, bytesOut: 0, error: error, meta: record.meta,
                verification: verify ? .invalid : nil)
            return 0
        }
    }

    /// Everything up to the encoded value (for JSON, up to its opening quote when `encoded`).
    private func writeHead(_ out: inout ByteBuffer, source: RecordSource, form: SAMLForm?, encoded: Bool) {
        switch format {
        case .jsonl:
            out.writeString("{\"source\":")
            out.writeString(JSONLine.quote(source.description))
            out.writeString(",\"form\":")
            out.writeString(form.map { "\"\($0.rawValue)\"" } ?? "null")
            out.writeString(encoded ? ",\"encoded\":\"" : ",\"encoded\":null")
        case .csv:
            out.writeString(Self.csvCell(source.description))
            out.writeString(",")
            out.writeString(form?.rawValue ?? "")
            out.writeString(",")
        }
    }

    /// Everything after the encoded value.
    private func writeTail(
        _ out: inout ByteBuffer, encoded: Bool, bytesIn: Int, bytesOut: Int, error: RecordError?, meta: String,
        verification: VerificationFields?
    ) {
        switch format {
        case .jsonl:
            if encoded { out.writeString("\"") }
            out.writeString(",\"bytesIn\":\(bytesIn),\"bytesOut\":\(bytesOut),\"error\":")
            out.writeString(error.map(Self.errorJSON) ?? "null")
            out.writeString(",\"meta\":")
            out.writeString(meta)
            if let verification {
                // Hash and timestamp are plain ASCII; only the issuer needs escaping.
                out.writeString(verification.valid ? ",\"valid\":true,\"issuer\":" : ",\"valid\":false,\"issuer\":")
                out.writeString(verification.issuer.map(JSONLine.quote) ?? "null")
                out.writeString(",\"nameIDHash\":")
                out.writeString(verification.nameIDHash.map { "\"\($0)\"" } ?? "null")
                out.writeString(",\"notOnOrAfter\":")
                out.writeString(verification.notOnOrAfter.map { "\"\($0)\"" } ?? "null")
                out.writeString(",\"survivesNormalization\":")
                out.writeString(verification.survivesNormalization.map { $0 ? "true" : "false" } ?? "null")
            }
            out.writeString("}\n")
        case .csv:
            out.writeString(",\(bytesIn),\(bytesOut),")
            out.writeString(error.map { Self.csvCell(Self.errorJSON($0)) } ?? "")
            out.writeString(",")
            out.writeString(Self.csvCell(meta))
            if let verification {
                out.writeString(verification.valid ? ",true," : ",false,")
                out.writeString(verification.issuer.map(Self.csvCell) ?? "")
                out.writeString(",")
                out.writeString(verification.nameIDHash ?? "")
                out.writeString(",")
                out.writeString(verification.notOnOrAfter ?? "")
                out.writeString(",")
                out.writeString(verification.survivesNormalization.map { $0 ? "true" : "false" } ?? "")
            }
            out.writeString("\r\n")
        }
    }

    static func errorJSON(_ error: RecordError) -> String {
        var line = JSONLine()
        line.add("code", error.code.rawValue)
        line.add("message", error.message)
        return line.json
    }

    /// A CSV cell, quoted when it holds a comma, quote or line break.
    ///
    /// Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage
    /// return before one) as a formula: a file named `=HYPERLINK(…).xml` would become a live
    /// link. Such a cell gets a leading `'`, the usual defence, which spreadsheets show as text.
    static func csvCell(_ text: String) -> String {
        var text = text
        if let first = text.utf8.first,
            first == UInt8(ascii: "=") || first == UInt8(ascii: "+") || first == UInt8(ascii: "-")
                || first == UInt8(ascii: "@") || first == 0x09 || first == 0x0D
        {
            text = "'" + text
        }
        // On UTF-8 bytes: "\r\n" is a single Character, equal to neither "\r" nor "\n".
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
