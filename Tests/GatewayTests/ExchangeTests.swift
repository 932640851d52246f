import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import NIOCore
import SAMLEncoding
import Testing

/// Valid exchanges land upstream exactly once encoded, whatever form the client used.
@Suite("Token exchange through the gateway")
struct ExchangeTests {
    @Test("v1: raw, base64 and encoded SAMLResponse all reach the upstream as the cookbook value")
    func v1AllForms() async throws {
        try await withHarness { h in
            for (index, form) in ["raw", "base64", "encoded"].enumerated() {
                let xml = GatewayHarness.issue()
                let value: String
                switch form {
                case "raw": value = String(decoding: xml, as: UTF8.self)
                case "base64": value = GatewayHarness.base64(xml)
                default: value = GatewayHarness.cookbook(xml)
                }
                let reply = try await h.exchangeV1(value, device: "device-\(index)")
                #expect(reply.status == 204, "\(form): \(reply.body)")
                #expect(reply.headers.first(name: "X-Request-Id") != nil)
                let record = try #require(h.upstream?.store.exchanges.last)
                #expect(record.samlResponse == GatewayHarness.cookbook(xml), "\(form) was not forwarded as the cookbook value")
                // The token now exists, seen through the gateway's pass-through.
                let check = try await h.send(.GET, "/api/v1/tokens/authn?requestor=REF&deviceId=device-\(index)")
                #expect(check.status == 200)
                #expect(check.json?["tokenSource"] as? String == "Apple")
            }
            #expect(h.upstream?.store.exchanges.count == 3)
        }
    }

    @Test("v1: a byte-order mark and a line break before raw XML (Windows files): the document verified is the one forwarded")
    func byteOrderMarkThenLineBreak() async throws {
        try await withHarness { h in
            for index in 0..<2 {
                let document: [UInt8] = [0xEF, 0xBB, 0xBF, 0x0D, 0x0A] + GatewayHarness.issue()
                let value = index == 0 ? String(decoding: document, as: UTF8.self) : GatewayHarness.base64(document)
                let reply = try await h.exchangeV1(value, device: "device-\(index)")
                #expect(reply.status == 204, "\(reply.body)")
                // The cookbook's normalization of the document (BOM kept, line break gone): the
                // bytes the gateway verified, encoded without a second normalization.
                #expect(h.upstream?.store.exchanges.last?.samlResponse == GatewayHarness.cookbook(document))
            }
            #expect(h.upstream?.store.exchanges.count == 2)
        }
    }

    @Test("v1: a value the cookbook already produced is forwarded as the app sent it, where a second normalization would change it")
    func cookbookValueNotNormalizedAgain() async throws {
        try await withHarness { h in
            for (index, form) in ["encoded", "base64 of the normalized document", "raw"].enumerated() {
                // A blank, a line break and a blank inside the root's start tag (no signature
                // covers it): the cookbook leaves two blanks, normalizing again would leave one.
                var xml = GatewayHarness.issue()
                let name = Array("<samlp:Response ".utf8)
                let at = try #require(xml.firstRange(of: name))
                xml.replaceSubrange(at, with: name + Array("\n ".utf8))
                var normalized = ByteBuffer()
                try xml.withUnsafeBytes { try CookbookEncoder.encode($0, stage: .normalized, into: &normalized) }
                #expect(String(buffer: normalized).contains("<samlp:Response  xmlns"))
                let cookbook = GatewayHarness.cookbook(xml)
                let value =
                    switch index {
                    case 0: cookbook
                    case 1: GatewayHarness.base64(Array(buffer: normalized))
                    default: String(decoding: xml, as: UTF8.self)  // raw XML is normalized once, as the cookbook would
                    }
                let reply = try await h.exchangeV1(value, device: "device-\(index)")
                #expect(reply.status == 204, "\(form): \(reply.body)")
                #expect(h.upstream?.store.exchanges.last?.samlResponse == cookbook, "\(form)")
            }
        }
    }

    @Test("v1: the other form fields are forwarded byte for byte, in order")
    func v1FieldsVerbatim() async throws {
        try await withHarness { h in
            let xml = GatewayHarness.issue()
            let body =
                "requestor=REF&deviceId=d%2Fx+y&mvpd=Cablevision&deviceType=tvOS&appId=com.example%2Eapp&SAMLResponse="
                + GatewayHarness.escape(GatewayHarness.cookbook(xml)) + "&deviceUser=u1"
            let reply = try await h.send(.POST, "/api/v1/tokens/authn", body: body)
            #expect(reply.status == 204, "\(reply.body)")
            let check = try await h.send(.GET, "/api/v1/tokens/authn?requestor=REF&deviceId=d%2Fx%20y")
            #expect(check.status == 200, "deviceId was not forwarded verbatim: \(check.body)")
        }
    }

    @Test("v2: profiles/sso/apple answers the upstream's appleSSO profile")
    func v2Profile() async throws {
        try await withHarness { h in
            let xml = GatewayHarness.issue()
            let reply = try await h.exchangeV2(GatewayHarness.base64(xml))
            #expect(reply.status == 201, "\(reply.body)")
            let profile = (reply.json?["profiles"] as? [String: Any])?[GatewayHarness.mvpd] as? [String: Any]
            #expect(profile?["type"] as? String == "appleSSO")
            #expect(profile?["issuer"] as? String == "Apple")
            let record = try #require(h.upstream?.store.exchanges.last)
            #expect(record.route == "v2")
            #expect(record.samlResponse == GatewayHarness.cookbook(xml))
        }
    }

    @Test("forward-form signature-preserving keeps a SignedInfo with line breaks intact; cookbook normalizes it")
    func signaturePreserving() async throws {
        let xml = GatewayHarness.issue { $0.signedInfoLineBreaks = true }
        let unnormalized = GatewayHarness.escapeFree(base64Percent: xml)
        #expect(unnormalized != GatewayHarness.cookbook(xml), "the fixture must be changed by normalization")
        try await withHarness(configure: { $0.forwardForm = .signaturePreserving }) { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 204, "\(reply.body)")
            #expect(h.upstream?.store.exchanges.last?.samlResponse == unnormalized)
            let metrics = try await h.send(.GET, "/metrics")
            #expect(metrics.body.contains("samlgate_signature_preserving_forwards_total 1"))
        }
        try await withHarness { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 204, "\(reply.body)")
            #expect(h.upstream?.store.exchanges.last?.samlResponse == GatewayHarness.cookbook(xml))
        }
    }
}
