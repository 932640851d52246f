import CLITestSupport
import Foundation
import NIOCore
import SAMLEncoding
import TestIdP
import Testing

/// Signed responses, a scratch directory and a way to run `samlgate batch` for real.
struct BatchFixture {
    static let mvpd = "Batch_MVPD"
    static let keyPair = try! IdPKeyPair.generate(.rsa2048, commonName: "batch test IdP")
    static let idp = try! TestIdentityProvider(keyPair: keyPair)
    /// A handful of distinct responses (pretty-printed and compact, several sizes), minted once.
    static let responses: [[UInt8]] = (0..<6).map { i in
        var options = IssueOptions(mvpd: mvpd, user: "user\(i)@example.com", attributes: [SAMLAttribute("zip", "1000\(i)")])
        options.pretty = i % 2 == 0
        options.padToSize = i == 5 ? 8 * 1024 : nil
        options.ttl = 24 * 3600
        return try! idp.issue(options)
    }

    let directory: URL

    init() throws {
        directory = TestScratch.directory("samlgate-batch")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Writes a file under the scratch directory (creating folders) and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url.path
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Compresses a file with the system's gzip, keeping the original.
    func gzip(_ name: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-k", "-f", path(name)]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return path(name) + ".gz"
    }

    /// Runs `samlgate batch` with `arguments` (progress off unless asked for).
    func batch(_ arguments: [String], stdin: Data = Data()) throws -> SamlgateProcess {
        let progress = arguments.contains("--progress") ? [] : ["--progress", "none"]
        return try SamlgateProcess.run(["batch"] + progress + arguments, stdin: stdin)
    }

    // MARK: Forms of a response and the expected output

    static func base64(_ xml: [UInt8]) -> String { Data(xml).base64EncodedString() }

    /// What the cookbook makes of a value in any form: the oracle for every record.
    static func cookbook(_ value: [UInt8]) -> String {
        var out = ByteBuffer()
        _ = try! value.withUnsafeBytes { bytes throws(SAMLEncodingError) in try CookbookEncoder.encodeAnyForm(bytes, into: &out) }
        return out.readString(length: out.readableBytes)!
    }

    static func encoded(_ xml: [UInt8]) -> String { cookbook(xml) }

    /// A JSON Lines line with the response in `SAMLResponse` and the extra fields.
    static func jsonLine(_ value: String, _ extra: [String: Any] = [:]) -> String {
        var object = extra
        object["SAMLResponse"] = value
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The output records, parsed.
    static func records(_ result: SamlgateProcess) -> [[String: Any]] {
        result.stdoutText.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["unparsable": String(line)]
        }
    }

    static func errorCode(_ record: [String: Any]) -> String? {
        (record["error"] as? [String: Any])?["code"] as? String
    }
}
