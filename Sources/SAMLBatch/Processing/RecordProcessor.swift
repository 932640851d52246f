import Crypto
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Turns a chunk of records into output records, on a worker thread. For each record: detect
/// the form, decode base64/encoded values to XML once, screen the XML (or verify it), then
/// encode it to the cookbook form straight into the output buffer. A failing record becomes an
/// error record; it never stops the chunk.
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
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: largest + 16, alignment: 16)
        defer { scratch.deallocate() }
        // The normalized document, for verification (what the encoded value decodes to).
        let normalized = UnsafeMutableRawBufferPointer.allocate(byteCount: verification == nil ? 0 : largest + 16, alignment: 16)
        defer { normalized.deallocate() }
        var shape = XMLShapeCheck()
        var fileBuffer = ByteBuffer()

        chunk.storage.withUnsafeReadableBytes { storage in
            for record in chunk.records {
                statistics.records += 1
                statistics.bytesIn += record.payload.count
                let value = UnsafeRawBufferPointer(rebasing: storage[record.payload])
                var form: SAMLForm?
                var fields: VerificationFields? = verification == nil ? nil : .invalid
                do throws(RecordError) {
                    if let failure = record.failure { throw failure }
                    form = try wrap { () throws(SAMLEncodingError) in try SAMLForm.detect(value) }
                    let xml = try xmlBytes(value, form: form!, scratch: scratch)
                    // Encoding first: it validates UTF-8, so invalid text is reported as such
                    // rather than as the broken XML it also is.
                    let mark = out.writerIndex
                    let count = try encode(xml, record: record, form: form!, into: &out, fileBuffer: &fileBuffer)
                    do throws(RecordError) {
                        try shape.check(xml)
                    } catch {
                        out.moveWriterIndex(to: mark)
                        throw error
                    }
                    var verifyError: RecordError?
                    if let verification {
                        do throws(RecordError) {
                            fields = try verify(xml, decodedFrom: form!, record: record, verification, normalizedScratch: normalized)
                        } catch {
                            verifyError = error
                        }
                    }
                    if let directory {
                        if verifyError == nil {
                            try EncodedFileWriter.write(fileBuffer, directory: directory, record: record)
                        }
                    } else {
                        formatter.writeTail(
                            &out, encoded: true, bytesIn: record.payload.count, bytesOut: count, error: verifyError,
                            meta: record.meta, verification: fields)
                    }
                    statistics.encoded += 1
                    statistics.bytesOut += count
                    if let verifyError {
                        statistics.fail(verifyError.code.rawValue)
                        reports.append(Self.report(record, verifyError))
                    } else if fields?.valid == true {
                        statistics.valid += 1
                    }
                } catch {
                    statistics.fail(error.code.rawValue)
                    reports.append(Self.report(record, error))
                    if directory == nil {
                        formatter.writeHead(&out, source: record.source, form: form, encoded: false)
                        formatter.writeTail(
                            &out, encoded: false, bytesIn: record.payload.count, bytesOut: 0, error: error, meta: record.meta,
                            verification: fields)
                    }
                }
            }
        }
        return ChunkResult(sequence: chunk.sequence, output: out, statistics: statistics, reports: reports)
    }

    /// The XML a value stands for: the value itself when raw, else its decoding into `scratch`
    /// (surrounding whitespace, such as a file's last newline, trimmed first).
    private func xmlBytes(
        _ value: UnsafeRawBufferPointer, form: SAMLForm, scratch: UnsafeMutableRawBufferPointer
    ) throws(RecordError) -> UnsafeRawBufferPointer {
        var start = 0
        var end = value.count
        if form != .raw {
            while start < end, Self.isSpace(value[start]) { start += 1 }
            while end > start, Self.isSpace(value[end - 1]) { end -= 1 }
        }
        let trimmed = UnsafeRawBufferPointer(rebasing: value[start..<end])
        return try wrap { () throws(SAMLEncodingError) in
            try CookbookDecoder.xml(of: trimmed, form: form, scratch: UnsafeMutableRawBufferPointer(rebasing: scratch[..<(trimmed.count + 3)]))
        }
    }

    /// Verifies the document the record's encoded value stands for: the normalized response (or
    /// the decoded one, when the cookbook already normalized it), verified itself or proven the
    /// same tree as the verified original (never a verdict on other bytes than those encoded).
    /// `xml` is valid UTF-8 (the encoder checked it).
    private func verify(
        _ xml: UnsafeRawBufferPointer, decodedFrom form: SAMLForm, record: BatchRecord,
        _ verification: BatchVerification,
        normalizedScratch: UnsafeMutableRawBufferPointer
    ) throws(RecordError) -> VerificationFields {
        let mvpd = try verification.mvpd(for: record.mvpd)
        let count = try wrap { () throws(SAMLEncodingError) in
            try WhitespaceNormalizer.normalizeValidating(xml, decodedFrom: form, into: normalizedScratch)
        }
        let verified: VerifiedResponse
        do {
            verified = try verification.verifier.verify(
                original: xml, normalized: count.map { UnsafeRawBufferPointer(rebasing: normalizedScratch[..<$0]) } ?? xml,
                fallback: .equivalentTree,
                mvpd: mvpd, now: verification.now ?? Date())
        } catch {
            throw RecordError(error)
        }
        return VerificationFields(
            valid: true,
            issuer: verified.issuer,
            nameIDHash: verified.nameID.map(Self.sha256Hex),
            notOnOrAfter: verified.notOnOrAfter.map(UTCTimestamp.string),
            survivesNormalization: verified.survivesNormalization)
    }

    /// Encodes `xml` into the head of an output record (or into `fileBuffer` for `--out DIR`);
    /// returns the encoded size. The caller writes the record's tail.
    private func encode(
        _ xml: UnsafeRawBufferPointer, record: BatchRecord, form: SAMLForm, into out: inout ByteBuffer,
        fileBuffer: inout ByteBuffer
    ) throws(RecordError) -> Int {
        if directory != nil {
            fileBuffer.clear()
            try wrap { () throws(SAMLEncodingError) in try CookbookEncoder.encode(xml, decodedFrom: form, into: &fileBuffer) }
            return fileBuffer.readableBytes
        }
        let mark = out.writerIndex
        formatter.writeHead(&out, source: record.source, form: form, encoded: true)
        let before = out.writerIndex
        do throws(SAMLEncodingError) {
            try CookbookEncoder.encode(xml, decodedFrom: form, into: &out)
        } catch {
            out.moveWriterIndex(to: mark)
            throw RecordError(error)
        }
        return out.writerIndex - before
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
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(text.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
}
