import Foundation
import SAMLVerification
import TestIdP

/// The benchmark corpus: 10,000 signed 8 KB responses as raw XML files in a directory tree and
/// as one JSON Lines file (base64 values), written once to a temporary directory. 64 distinct
/// responses are minted and repeated (minting 10,000 RSA signatures would dominate the set-up;
/// verification cost does not depend on uniqueness without a replay cache).
struct BatchCorpus {
    static let mvpd = "BenchMVPD"
    static let records = 10_000

    let directory: String
    let rawDirectory: String
    let jsonLines: String
    let rawBytes: Int
    let jsonLinesBytes: Int
    let certificatePath: String
    /// The distinct responses; record i is `distinct[i % distinct.count]`.
    let distinct: [[UInt8]]
    let verifier: Verifier

    static func make() -> BatchCorpus {
        let pair = try! IdPKeyPair.generate(.rsa2048)
        let idp = try! TestIdentityProvider(keyPair: pair)
        let distinct = (0..<64).map { i -> [UInt8] in
            var options = IssueOptions(mvpd: mvpd, user: "bench-user-\(i)@example.com", attributes: [SAMLAttribute("userID", "u-\(i)")])
            options.ttl = 10 * 365 * 86_400
            options.padToSize = 8 * 1024
            options.pretty = i % 2 == 0
            return try! idp.issue(options)
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("samlgate-batch-bench-\(getpid())").path
        let raw = root + "/raw"
        try! FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        var rawBytes = 0
        var lines = Data()
        for i in 0..<records {
            let xml = distinct[i % distinct.count]
            let folder = raw + "/" + String(format: "%02d", i / 1_000)
            if i % 1_000 == 0 { try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            FileManager.default.createFile(atPath: folder + "/" + String(format: "%05d.xml", i), contents: Data(xml))
            rawBytes += xml.count
            lines.append(Data("{\"id\":\(i),\"mvpd\":\"\(mvpd)\",\"SAMLResponse\":\"\(Data(xml).base64EncodedString())\"}\n".utf8))
        }
        let jsonl = root + "/corpus.jsonl"
        try! lines.write(to: URL(fileURLWithPath: jsonl))
        let certificate = root + "/idp.pem"
        try! pair.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        let store = TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [pair.certificatePEM])])
        FileHandle.standardError.write(Data("batch corpus: \(records) records, raw \(rawBytes) bytes, JSON Lines \(lines.count) bytes\n".utf8))
        return BatchCorpus(
            directory: root, rawDirectory: raw, jsonLines: jsonl, rawBytes: rawBytes, jsonLinesBytes: lines.count,
            certificatePath: certificate, distinct: distinct, verifier: Verifier(trustStore: store, replayCache: nil))
    }
}
