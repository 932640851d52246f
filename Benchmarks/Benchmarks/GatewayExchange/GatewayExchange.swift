import Benchmark
import Foundation
@_spi(Benchmarks) import Gateway
import NIOCore
import NIOHTTP1
import SAMLEncoding
import SAMLVerification
import TestIdP

/// One token exchange in process, without the network: form parse → verify → encode → the
/// upstream request head built as the data plane builds it (`gateway-exchange`), next to the verification alone on the same
/// response (`verify-only`), so the overhead of everything but the signature check is the
/// difference of the two rows of one run. Responses are ~8 KB, RSA-2048, cookbook-encoded in the
/// form body as apps send them. Replay protection is off (one response, many iterations).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .cpuTotal, .instructions],
        timeUnits: .microseconds,
        warmupIterations: 20,
        maxDuration: .seconds(3),
        maxIterations: 100_000,
        thresholds: [.wallClock: .relaxed, .mallocCountTotal: .relaxed]
    )
    let mvpd = "BenchMVPD"
    let pair = try! IdPKeyPair.generate(.rsa2048)
    var options = IssueOptions(mvpd: mvpd, user: "bench@example.com", attributes: [SAMLAttribute("zip", "10001")])
    options.ttl = 86_400
    options.padToSize = 8 * 1024
    let xml = try! TestIdentityProvider(keyPair: pair).issue(options)
    var encoded = ByteBuffer()
    try! xml.withUnsafeBytes { try CookbookEncoder.encode($0, into: &encoded) }
    var body = ByteBuffer(string: "requestor=REF&deviceId=bench-device&mvpd=\(mvpd)&deviceType=iOS&SAMLResponse=")
    body.writeImmutableBuffer(encoded)

    let store = TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [pair.certificatePEM])])
    let trust = ReloadableTrustStore(store)
    let processor = ExchangeProcessor(trustStore: trust, options: VerificationOptions(), replayCache: nil, forwardForm: .cookbook)
    let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: nil)
    var incoming = HTTPHeaders()
    incoming.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
    incoming.add(name: "User-Agent", value: "AppleTV/1.0")
    incoming.add(name: "Accept", value: "application/json")
    let peer = try! SocketAddress(ipAddress: "127.0.0.1", port: 50_000)
    let trustedProxies = TrustedProxies()

    Benchmark("gateway-exchange/8KB") { benchmark in
        for _ in benchmark.scaledIterations {
            guard case .forward(let prepared) = processor.prepare(body: body, route: .v1) else { fatalError("the fixture must verify") }
            var headers = ProxyHeaders.upstreamRequest(
                incoming, authority: "gateway", peer: peer, trusting: trustedProxies, requestID: "0123456789abcdef")
            headers.replaceOrAdd(name: "Content-Type", value: "application/x-www-form-urlencoded")
            headers.add(name: "Content-Length", value: String(prepared.upstreamBody.readableBytes))
            blackHole(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/api/v1/tokens/authn", headers: headers))
            blackHole(prepared.upstreamBody)
        }
    }

    Benchmark("verify-only/8KB") { benchmark in
        xml.withUnsafeBytes { bytes in
            for _ in benchmark.scaledIterations {
                blackHole(try! verifier.verify(bytes, mvpd: mvpd))
            }
        }
    }
}
