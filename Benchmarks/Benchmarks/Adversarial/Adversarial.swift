import Benchmark
import Foundation
import SAMLEncoding
import SAMLVerification
import TestIdP

/// The worst input of each class an attacker can build, beside a genuine response of the same
/// size (padded with ordinary SAML attributes), each verified the way the gateway does it:
/// cookbook normalization, then ``Verifier/verify(original:normalized:fallback:mvpd:now:expectedInResponseTo:)``.
///
/// Every hostile document is the genuine response with content inserted inside its signed
/// Assertion, one line per repetition: the digest then fails (on the normalized document, then
/// on the original, then once more with libxml2 canonicalizing — the most work a request can
/// cause), and the markup is as costly as the limits allow. Compare each row with
/// `genuine/<size>`: the goal is at most 3× its CPU.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 3,
        maxDuration: .seconds(3),
        maxIterations: 10_000,
        thresholds: [.wallClock: .relaxed, .mallocCountTotal: .relaxed]
    )
    let mvpd = "BenchMVPD"
    let size = 256 * 1024
    let pair = try! IdPKeyPair.generate(.rsa2048)
    let idp = try! TestIdentityProvider(keyPair: pair)
    func issue(_ configure: (inout IssueOptions) -> Void = { _ in }) -> String {
        var options = IssueOptions(mvpd: mvpd, user: "bench@example.com", attributes: [SAMLAttribute("zip", "10001")])
        options.ttl = 86_400 * 365
        configure(&options)
        return try! idp.issueString(options)
    }
    let compact = issue()
    /// `compact` with `unit` repeated inside its Assertion up to `size` bytes.
    func hostile(_ unit: String, prefix: String = "", suffix: String = "") -> [UInt8] {
        let room = size - compact.utf8.count - prefix.utf8.count - suffix.utf8.count
        let body = String(repeating: unit, count: max(1, room / unit.utf8.count))
        return Array(compact.replacingOccurrences(of: "</saml:Assertion>", with: prefix + body + suffix + "</saml:Assertion>").utf8)
    }
    let attributes64 = "<x " + (0..<64).map { "a\($0)=\"v\"" }.joined(separator: " ") + "/>\n"
    let declarations = (0..<32).map { "xmlns:p\($0)=\"urn:p:\($0)\"" }.joined(separator: " ")
    let deepChain = String(repeating: "<d>", count: 240) + String(repeating: "</d>", count: 240) + "\n"
    let text = String(repeating: "abcdefghij", count: 8) + "\n"
    var tampered = issue { $0.pretty = true; $0.padToSize = size }
    tampered = tampered.replacingOccurrences(of: "bench@example.com", with: "bench@example.org")

    let cases: [(String, [UInt8])] = [
        ("genuine", Array(issue { $0.padToSize = size }.utf8)),
        ("genuine-pretty", Array(issue { $0.pretty = true; $0.padToSize = size }.utf8)),
        ("attributes-64-per-element", hostile(attributes64)),
        ("attribute-bomb-refused", hostile(" a=\"\"", prefix: "<x", suffix: "/>")),
        ("namespaces-64-in-scope", hostile("<p0:e/>\n", prefix: "<n1 \(declarations)><n2 \(declarations.replacingOccurrences(of: "xmlns:p", with: "xmlns:q"))>", suffix: "</n2></n1>")),
        ("namespace-bomb-refused", hostile(" xmlns:z=\"urn:z\"", prefix: "<x", suffix: "/>")),
        ("depth-240", hostile(deepChain)),
        ("many-elements", hostile("<e/>\n")),
        ("long-text", hostile(text, prefix: "<t>", suffix: "</t>")),
        ("comments-and-pis", hostile("<!--c-->\n<?p x?>\n")),
        ("signature-fails-after-normalization", Array(tampered.utf8)),
    ]
    let store = TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [pair.certificatePEM])])
    let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: nil)

    for (name, document) in cases {
        Benchmark("\(name)/\(size / 1024)KB") { benchmark in
            var normalized = [UInt8](repeating: 0, count: document.count)
            document.withUnsafeBytes { original in
                normalized.withUnsafeMutableBytes { output in
                    for _ in benchmark.scaledIterations {
                        let count = WhitespaceNormalizer.normalize(original, into: output)
                        blackHole(try? verifier.verify(original: original, normalized: UnsafeRawBufferPointer(rebasing: output[..<count]),
                                                      fallback: .equivalentTree, mvpd: mvpd))
                    }
                }
            }
        }
    }
}
