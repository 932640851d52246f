import Benchmark
import Foundation
import SAMLEncoding
import SAMLVerification
import TestIdP

/// The worst input of each class an attacker can build, beside a genuine response of the same
/// size (padded with ordinary SAML attributes), each verified the way the gateway does it:
/// ``UnverifiedDocument`` (the cookbook normalization), then ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``.
///
/// Every hostile document is the genuine response with content inserted inside its signed
/// Assertion, one line per repetition: the digest then fails (on the normalized document, then
/// on the original, then once more with libxml2 canonicalizing — the most work a request can
/// cause), and the markup is as dense as the limits allow (`…-refused` rows: past a limit, the
/// cost of refusing). Compare each row with `genuine/<size>`.
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
    /// Just under the verifier's 1 MiB document limit: the largest document a request can carry.
    let size = 1_000_000
    let pair = try! IdPKeyPair.generate(.rsa2048)
    let idp = try! TestIdentityProvider(keyPair: pair)
    func issue(_ configure: (inout IssueOptions) -> Void = { _ in }) -> String {
        var options = IssueOptions(mvpd: mvpd, user: "bench@example.com", attributes: [SAMLAttribute("zip", "10001")])
        options.ttl = 86_400 * 365
        configure(&options)
        return try! idp.issueString(options)
    }
    let compact = issue()
    /// Signed by a key the trust store does not hold (a forger signs whatever he sends).
    let forger = try! TestIdentityProvider(keyPair: try! IdPKeyPair.generate(.rsa2048))
    var forgedOptions = IssueOptions(mvpd: mvpd, user: "bench@example.com", attributes: [SAMLAttribute("zip", "10001")])
    forgedOptions.ttl = 86_400 * 365
    let forged = try! forger.issueString(forgedOptions)
    forgedOptions.padToSize = size
    let forgedPadded = try! forger.issueString(forgedOptions)
    /// `base` (`compact` by default) with `unit` repeated inside its Assertion up to `bytes` bytes.
    func hostile(_ unit: String, prefix: String = "", suffix: String = "", in base: String? = nil, bytes: Int = size) -> [UInt8] {
        let base = base ?? compact
        let room = bytes - base.utf8.count - prefix.utf8.count - suffix.utf8.count
        let body = String(repeating: unit, count: max(1, room / unit.utf8.count))
        return Array(base.replacingOccurrences(of: "</saml:Assertion>", with: prefix + body + suffix + "</saml:Assertion>").utf8)
    }
    /// `base` whose Reference's `InclusiveNamespaces` lists `prefixes` instead of `xs`.
    func withPrefixList(_ prefixes: [String], in base: String? = nil) -> String {
        (base ?? compact).replacingOccurrences(of: "PrefixList=\"xs\"", with: "PrefixList=\"\(prefixes.joined(separator: " "))\"")
    }
    let sixteen = (0..<16).map { "q\($0)" }
    // Each hostile unit packs markup items (elements, attributes, comments, PIs) as densely as
    // the limits allow: one per 32 bytes (``MarkupLimits/bytesPerMarkupItem``).
    let filler = String(repeating: "a", count: 24)
    let attributes64 = "<x " + (0..<63).map { "a\($0)=\"\(filler)\"" }.joined(separator: " ") + "/>\n"
    let declarations = (0..<13).map { "xmlns:p\($0)=\"urn:p:\($0)\(filler)\"" }.joined(separator: " ")
    let deepChain = String(repeating: "<d>" + filler + "aaaa", count: 28) + String(repeating: "</d>", count: 28) + "\n"
    let text = String(repeating: "abcdefghij", count: 8) + "\n"
    var tampered = issue {
        $0.pretty = true
        $0.padToSize = size
    }
    tampered = tampered.replacingOccurrences(of: "bench@example.com", with: "bench@example.org")
    let inclusive = issue { $0.canonicalization = .inclusive10 }
    forgedOptions.canonicalization = .inclusive10
    let forgedInclusive = try! forger.issueString(forgedOptions)
    let transforms = compact.replacingOccurrences(
        of: "</ds:Transforms>",
        with: String(repeating: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>", count: 3000) + "</ds:Transforms>")

    let cases: [(String, [UInt8])] = [
        ("genuine", Array(issue { $0.padToSize = size }.utf8)),
        (
            "genuine-pretty",
            Array(
                issue {
                    $0.pretty = true
                    $0.padToSize = size
                }.utf8)
        ),
        ("attributes-63-per-element", hostile(attributes64)),
        ("attribute-bomb-refused", hostile(" a=\"\"", prefix: "<x", suffix: "/>")),
        (
            "namespaces-26-in-scope",
            hostile(
                "<p0:e>\(filler)</p0:e>\n", prefix: "<n1 \(declarations)><n2 \(declarations.replacingOccurrences(of: "xmlns:p", with: "xmlns:q"))>",
                suffix: "</n2></n1>")
        ),
        ("namespace-bomb-refused", hostile(" xmlns:z=\"urn:z\"", prefix: "<x", suffix: "/>")),
        ("depth-28", hostile(deepChain)),
        ("many-elements", hostile("<e>\(filler)</e>\n")),
        ("element-bomb-refused", hostile("<e/>\n")),
        ("long-text", hostile(text, prefix: "<t>", suffix: "</t>")),
        ("comments", hostile("<!--\(filler)-->\n")),
        ("processing-instructions", hostile("<?p \(filler)?>\n")),
        ("transforms-repeated-refused", Array(transforms.utf8)),
        // The longest PrefixList allowed, of prefixes declared nowhere (each lookup walks every
        // ancestor to the root), over the deepest chains: the most lookups per element.
        ("prefix-list-16-deep", hostile(deepChain, in: withPrefixList(sixteen))),
        ("prefix-list-16-elements", hostile("<e>\(filler)</e>\n", in: withPrefixList(sixteen))),
        // The same, signed by a key the store does not hold: the forger's digests may match.
        ("another-key-prefix-list-16-deep", hostile(deepChain, in: withPrefixList(sixteen, in: forged))),
        ("another-key-genuine-shape", Array(forgedPadded.utf8)),
        // Without the bound, 94 KB of this cost seconds (the size first reported) and 1 MB minutes.
        ("prefix-list-bomb-refused", hostile(deepChain, in: withPrefixList((0..<3_000).map { "q\($0)" }), bytes: 94 * 1024)),
        ("prefix-list-bomb-refused", hostile(deepChain, in: withPrefixList((0..<20_000).map { "q\($0)" }))),
        ("signature-fails-after-normalization", Array(tampered.utf8)),
        // Inclusive C14N (some IdPs sign so): libxml2 canonicalizes, ancestors' namespaces and
        // all; compare with the exclusive rows of the same class.
        (
            "inclusive-genuine",
            Array(
                issue {
                    $0.canonicalization = .inclusive10
                    $0.padToSize = size
                }.utf8)
        ),
        ("inclusive-many-elements", hostile("<e>\(filler)</e>\n", in: inclusive)),
        ("inclusive-depth-28", hostile(deepChain, in: inclusive)),
        ("another-key-inclusive-genuine-shape", Array(forgedInclusive.utf8)),
        // Inclusive C14N is taken up to 64 KiB only: the worst it can cost, beside the same
        // size genuine and exclusive.
        ("genuine", Array(issue { $0.padToSize = 63 * 1024 }.utf8)),
        ("depth-28", hostile(deepChain, bytes: 63 * 1024)),
        ("inclusive-depth-28", hostile(deepChain, in: inclusive, bytes: 63 * 1024)),
        ("inclusive-many-elements", hostile("<e>\(filler)</e>\n", in: inclusive, bytes: 63 * 1024)),
    ]
    let store = TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [pair.certificatePEM])])
    let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: nil)

    /// The verdict on `document`, shown in the benchmark's name: a hostile row must get as far
    /// as its class allows (a signature failure), a refused row must be refused for its class.
    func verdict(_ document: [UInt8]) -> String {
        do throws(VerificationError) {
            _ = try verifier.verifyForForwarding(try! UnverifiedDocument(document, decodedFrom: .raw), fallback: .equivalentTree, mvpd: mvpd)
            return "valid"
        } catch {
            return error.code.rawValue
        }
    }

    for (name, document) in cases {
        Benchmark("\(name)/\(document.count / 1024)KB/\(verdict(document))") { benchmark in
            for _ in benchmark.scaledIterations {
                // The normalization is part of the cost, as on the gateway (one allocation of the document's size).
                guard let unverified = try? UnverifiedDocument(document, decodedFrom: .raw) else { continue }
                blackHole(try? verifier.verifyForForwarding(unverified, fallback: .equivalentTree, mvpd: mvpd))
            }
        }
    }
}
