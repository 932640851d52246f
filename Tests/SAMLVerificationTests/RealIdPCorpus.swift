import CZlib
import Foundation
import SAMLEncoding
import SAMLVerification

/// The real-IdP corpus: genuine and forged SAML responses from peer SAML libraries' test data,
/// each with the certificate the peer test trusts, the instant it verifies at and the options it
/// needs (`RealIdP/manifest.json`, provenance in `RealIdP/PROVENANCE.md`).
enum RealIdPCorpus {
    static let mvpd = "RealIdP"

    static let directory: URL = Bundle.module.url(forResource: "RealIdP", withExtension: nil)!

    static let entries: [RealIdPEntry] = {
        struct Manifest: Decodable { var entries: [RealIdPEntry] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let data = try! Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try! decoder.decode(Manifest.self, from: data).entries
    }()

    static func entry(_ id: String) -> RealIdPEntry {
        entries.first { $0.id == id }!
    }

    /// The stored file's bytes, exactly as the peer repository has them.
    static func fileBytes(_ entry: RealIdPEntry) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(entry.file)))
    }

    /// The XML document the entry stores.
    static func document(_ entry: RealIdPEntry) throws -> [UInt8] {
        let raw = try fileBytes(entry)
        guard entry.encoding != .xml else { return raw }
        let text = String(decoding: raw, as: UTF8.self).filter { !$0.isWhitespace }
        guard let decoded = Data(base64Encoded: text) else { throw CorpusError("\(entry.file) is not base64") }
        return entry.encoding == .base64 ? Array(decoded) : try inflateRaw(Array(decoded))
    }

    /// A verifier trusting only the entry's certificate, with its audience, destination, issuer
    /// and SHA-1 setting.
    static func verifier(_ entry: RealIdPEntry, _ configure: (inout VerificationOptions) -> Void = { _ in }) throws -> Verifier {
        var pems: [String] = []
        if let certificate = entry.certificate {
            pems.append(try String(contentsOf: directory.appendingPathComponent(certificate), encoding: .utf8))
        }
        var options = VerificationOptions()
        options.audience = entry.audience
        options.expectedDestination = entry.destination
        options.allowSHA1 = entry.allowSHA1 ?? false
        configure(&options)
        // The peers' test keys include RSA-1024, which a trust store takes only with allow-weak-keys.
        let trust = try IdentityProviderTrust(mvpd: mvpd, certificatesPEM: pems, issuer: entry.issuer, allowWeakKeys: true)
        return Verifier(trustStore: TrustStore(providers: [trust]), options: options, replayCache: nil)
    }

    /// The verdict on the stored document: the verified response, or the error.
    static func verify(
        _ entry: RealIdPEntry, document: [UInt8]? = nil, _ configure: (inout VerificationOptions) -> Void = { _ in }
    ) throws -> Result<VerifiedResponse, VerificationError> {
        let verifier = try verifier(entry, configure)
        let bytes = try document ?? Self.document(entry)
        return Result { () throws(VerificationError) in
            try verifier.verify(bytes, mvpd: mvpd, now: entry.now, expectedInResponseTo: entry.inResponseTo)
        }
    }

    /// The verdict on the entry's document as the gateway forwards it: its cookbook
    /// normalization verified first, the original with `fallback` after.
    static func forwarded(
        _ entry: RealIdPEntry, fallback: NormalizationFallback = .equivalentTree
    ) throws
        -> Result<VerifiedResponse, VerificationError>
    {
        let verifier = try verifier(entry)
        let unverified = try UnverifiedDocument(try document(entry), decodedFrom: .raw)
        return Result { () throws(VerificationError) in
            try verifier.verifyForForwarding(
                unverified, fallback: fallback, mvpd: mvpd, now: entry.now, expectedInResponseTo: entry.inResponseTo
            ).response
        }
    }

    /// Inflates raw DEFLATE data (no zlib or gzip header), as SAML's redirect binding encodes it.
    static func inflateRaw(_ input: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CorpusError("inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var source = input
        return try source.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if status == Z_STREAM_END { return output }
                guard status == Z_OK else { throw CorpusError("not raw DEFLATE (zlib status \(status))") }
            }
        }
    }
}
