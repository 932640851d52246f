// Processing a chunk of records on a worker thread, and what it makes of them: each record's
// outcome, its `--verify` columns, the chunk's result.

import Crypto
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Turns a chunk of records into output records, on a worker thread. For each record, first
/// its outcome — detect the form, decode base64/encoded values to XML once, normalize the
/// document to encode, screen the XML (or verify it) — then, once that is settled, its output
/// record (or `--out DIR` file), written once with the value encoded straight into it. A failing
/// record becomes an error record; it never stops the chunk.
struct RecordProcessor: Sendable {
    let formatter: RecordFormatter
    let verification: BatchVerification?
    /// `--out DIR`: one `.encoded` file per record instead of output records (with `--verify`,
    /// per valid record: a replay directory must not hold forged responses).
    let directory: RawPath?

    func process(_ chunk: RecordChunk) -> ChunkResult {
        var statistics = BatchStatistics()
        var reports: [String] = []
        let largest = chunk.records.reduce(0) { max($0, $1.payload.count) }
        var out = ByteBufferAllocator().buffer(
            capacity: directory == nil ? chunk.storage.readableBytes * 7 / 5 + chunk.records.count * 256 : 0)
        // Per chunk, reused by every record: the decoded XML, and the encoded value (a record's
        // outcome holds it until written, then the next record clears it in place).
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: largest + 16, alignment: 16)
        defer { scratch.deallocate() }
        var encoded = ByteBufferAllocator().buffer(capacity: CookbookEncoder.requiredCapacity(forInputCount: largest))
        var shape = XMLShapeCheck()

        chunk.storage.withUnsafeReadableBytes { storage in
            for record in chunk.records {
                let value = UnsafeRawBufferPointer(rebasing: storage[record.payload])
                var outcome = self.outcome(of: record, value: value, scratch: scratch, encoded: &encoded, shape: &shape)
                // Written once, now that the outcome is settled.
                var bytesOut = 0
                if let directory {
                    do throws(RecordError) {
                        bytesOut = try EncodedFileWriter.write(outcome, of: record, directory: directory)
                    } catch {
                        outcome = .failed(form: outcome.form, error: error)
                    }
                } else {
                    bytesOut = formatter.write(outcome, of: record, into: &out)
                }
                Self.count(outcome, of: record, bytesOut: bytesOut, statistics: &statistics, reports: &reports)
            }
        }
        return ChunkResult(sequence: chunk.sequence, output: out, statistics: statistics, reports: reports)
    }

    /// What a record comes to, with nothing written yet: its value encoded into `encoded`, or its
    /// failure. Encoding comes first: it validates UTF-8, so invalid text is reported as such
    /// rather than as the broken XML it also is; then the shape screen, then (with `--verify`)
    /// the verifier, whose refusal leaves the record encoded, with the reason. Without
    /// `--verify` the cookbook's fused encoder normalizes while it encodes (one pass); a record
    /// to verify is normalized once, by the verifier's ``UnverifiedDocument``: a valid one's
    /// value is what its ``VerifiedDocument`` encodes (exactly the bytes verified, the only ones
    /// an `--out DIR` replay file may hold), an invalid one's the same normalization, unverified.
    private func outcome(
        of record: BatchRecord, value: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer, encoded: inout ByteBuffer,
        shape: inout XMLShapeCheck
    ) -> RecordOutcome {
        if let failure = record.failure { return .failed(form: nil, error: failure) }
        // The XML the value stands for: the value itself when raw, else its decoding into
        // `scratch` (surrounding whitespace, such as a file's last newline, trimmed first).
        let decoded: (xml: UnsafeRawBufferPointer, form: SAMLForm)
        do throws(SAMLEncodingError) {
            decoded = try CookbookDecoder.xml(detectingFormOf: value, trimmingWhitespace: true, scratch: scratch)
        } catch {
            // The form is known when decoding failed after detection: detecting again, on this
            // failure path only, tells which.
            return .failed(form: try? SAMLForm.detect(value), error: RecordError(error))
        }
        let (xml, form) = decoded
        encoded.clear()
        guard let verification else {
            do throws(RecordError) {
                try wrap { () throws(SAMLEncodingError) in try CookbookEncoder.encode(xml, decodedFrom: form, into: &encoded) }
                try shape.check(xml)
            } catch {
                return .failed(form: form, error: error)
            }
            return .encoded(form: form, value: encoded, verification: nil, error: nil)
        }
        let unverified: UnverifiedDocument
        do throws(RecordError) {
            unverified = try wrap { () throws(SAMLEncodingError) in try UnverifiedDocument(Array(xml), decodedFrom: form) }
            try shape.check(xml)
        } catch {
            return .failed(form: form, error: error)
        }
        do throws(RecordError) {
            let verified = try verify(unverified, record: record, verification)
            verified.encode(into: &encoded)
            return .encoded(form: form, value: encoded, verification: Self.fields(of: verified.response), error: nil)
        } catch {
            unverified.withNormalizedBytes { CookbookEncoder.encodeWithoutNormalizing($0, into: &encoded) }
            return .encoded(form: form, value: encoded, verification: .invalid, error: error)
        }
    }

    /// Counts a written record; a failed one is also named for standard error.
    private static func count(
        _ outcome: RecordOutcome, of record: BatchRecord, bytesOut: Int, statistics: inout BatchStatistics, reports: inout [String]
    ) {
        statistics.records += 1
        statistics.bytesIn += record.payload.count
        if case .encoded(_, _, let verification, let error) = outcome {
            statistics.encoded += 1
            statistics.bytesOut += bytesOut
            if error == nil, verification?.valid == true { statistics.valid += 1 }
        }
        if let error = outcome.error {
            statistics.fail(error.code.rawValue)
            reports.append(report(record, error))
        }
    }

    /// Verifies the document the record's encoded value stands for, as the gateway forwards it
    /// in its default `cookbook` form (``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``):
    /// the cookbook normalization, verified itself or proven the same tree as the verified original.
    private func verify(
        _ document: UnverifiedDocument, record: BatchRecord, _ verification: BatchVerification
    ) throws(RecordError) -> VerifiedDocument {
        let mvpd = try verification.mvpd(for: record.mvpd)
        do {
            return try verification.verifier.verifyForForwarding(document, fallback: .equivalentTree, mvpd: mvpd, now: verification.now ?? Date())
        } catch {
            throw RecordError(error)
        }
    }

    /// The verification columns of a valid record (the NameID only as its hash).
    private static func fields(of verified: VerifiedResponse) -> VerificationFields {
        VerificationFields(
            valid: true,
            issuer: verified.issuer,
            nameIDHash: verified.nameID.map(sha256Hex),
            notOnOrAfter: verified.notOnOrAfter.map(UTCTimestamp.string),
            survivesNormalization: verified.survivesNormalization)
    }

    /// The line naming a failed record on standard error. The source is printable already; the
    /// message is made so too, in case it quotes anything from the input.
    private static func report(_ record: BatchRecord, _ error: RecordError) -> String {
        "\(record.source): \(error.code): \(RawPath.printable(Array(error.message.utf8)[...], escapingBackslash: false))"
    }

    private func wrap<T>(_ body: () throws(SAMLEncodingError) -> T) throws(RecordError) -> T {
        do {
            return try body()
        } catch {
            throw RecordError(error)
        }
    }

    /// Lower-case hex SHA-256 of a string's UTF-8, the only form a NameID leaves the process in.
    static func sha256Hex(_ text: String) -> String {
        HexDigits.lowercase(SHA256.hash(data: Array(text.utf8)))
    }
}

// MARK: - What a record and a chunk come to

/// What processing made of one batch record, settled before any of it is written: the output
/// record (``RecordFormatter``) or the `--out DIR` file (``EncodedFileWriter``) is written once,
/// whole, from this value.
enum RecordOutcome {
    /// The value was brought to the cookbook form: `value` is it, encoded (the processor's
    /// buffer for the chunk, cleared for the next record once this one is written). With
    /// `--verify`, `verification` holds the columns and `error` says why a record that encodes
    /// did not verify.
    case encoded(form: SAMLForm, value: ByteBuffer, verification: VerificationFields?, error: RecordError?)
    /// The record could not be brought to the cookbook form: it is written with its error and no
    /// value (`form` is known when detection got that far; with `--verify` it is not valid).
    case failed(form: SAMLForm?, error: RecordError)

    var form: SAMLForm? {
        switch self {
        case .encoded(let form, _, _, _): form
        case .failed(let form, _): form
        }
    }

    /// Why the record failed (to encode, or with `--verify` to verify), if it did.
    var error: RecordError? {
        switch self {
        case .encoded(_, _, _, let error): error
        case .failed(_, let error): error
        }
    }
}

/// The `--verify` columns of one record. The NameID itself never leaves the process: only its
/// SHA-256.
struct VerificationFields {
    var valid: Bool
    var issuer: String?
    var nameIDHash: String?
    var notOnOrAfter: String?
    var survivesNormalization: Bool?

    static let invalid = VerificationFields(valid: false)
}

/// What a worker made of a chunk: the formatted output records, the counts, and one report
/// line per failed record (`source: code: message`).
struct ChunkResult: Sendable {
    var sequence: Int
    var output: ByteBuffer
    var statistics: BatchStatistics
    var reports: [String]
}

// MARK: - Timestamps

/// `2026-11-22T07:26:46Z` for a date, with `gmtime_r` and no formatter object: the same text as
/// Foundation's `.iso8601` style at a fraction of its cost (it runs once per verified record).
enum UTCTimestamp {
    static func string(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        return "\(year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
