import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import Testing

/// W3C Trace Context through the real gateway: the client's trace continued with the gateway's
/// own span as the backend's parent, on pass-through and exchange alike; anything that is not a
/// valid `traceparent` starts a new trace; the trace id is in the log lines.
@Suite("Trace context")
struct TraceContextTests {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let clientParent = "00f067aa0ba902b7"
    static let incoming = "00-\(traceID)-\(clientParent)-01"

    /// The parts of the one `traceparent` the upstream received (version, trace id, parent, flags).
    static func parts(_ received: EchoUpstream.Received?) throws -> [String] {
        let values = try #require(received).header("traceparent")
        #expect(values.count == 1, "\(values)")
        let parts = try #require(values.first).split(separator: "-").map(String.init)
        #expect(parts.count == 4 && parts[0] == "00" && parts[1].count == 32 && parts[2].count == 16 && parts[3].count == 2, "\(parts)")
        #expect(parts[1] != String(repeating: "0", count: 32) && parts[2] != String(repeating: "0", count: 16))
        return parts
    }

    @Test("pass-through and v1 exchange: same trace id and flags, the gateway's span as parent, tracestate forwarded")
    func continued() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let pass = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", Self.incoming), ("tracestate", "vendor=abc")])
            #expect(pass.status == 200)
            let passParts = try Self.parts(echo.requests.last)
            #expect(passParts[1] == Self.traceID && passParts[3] == "01")
            #expect(passParts[2] != Self.clientParent)
            #expect(echo.requests.last?.header("tracestate") == ["vendor=abc"])

            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let exchange = try await h.send(
                .POST, "/api/v1/tokens/authn", body: body,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("traceparent", Self.incoming)])
            #expect(exchange.status == 200, "\(exchange.body)")
            let exchangeParts = try Self.parts(echo.requests.last)
            #expect(exchangeParts[1] == Self.traceID && exchangeParts[2] != Self.clientParent && exchangeParts[2] != passParts[2])
        }
    }

    @Test(
        "no traceparent, a malformed one, a forbidden version, zero ids or two headers: a new trace, random (02), the client's tracestate dropped",
        arguments: [
            [(String, String)](),
            [("traceparent", "00-\(traceID.uppercased())-\(clientParent)-01")],
            [("traceparent", "ff-\(traceID)-\(clientParent)-01")],
            [("traceparent", "00-\(String(repeating: "0", count: 32))-\(clientParent)-01")],
            [("traceparent", "00-\(traceID)-0000000000000000-01")],
            [("traceparent", "00-\(traceID)-\(clientParent)-01-extra")],
            [("traceparent", "00-\(traceID)-\(clientParent)")],
            [("traceparent", incoming), ("traceparent", incoming)],
        ])
    func fresh(headers: [(String, String)]) async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let reply = try await h.send(.GET, "/api/v2/REF/configuration", headers: headers + [("tracestate", "vendor=abc")])
            #expect(reply.status == 200)
            let parts = try Self.parts(echo.requests.last)
            // Not sampled; W3C Trace Context Level 2's random flag: the gateway draws its trace ids whole.
            #expect(parts[1] != Self.traceID && parts[3] == "02")
            #expect(echo.requests.last?.header("tracestate").isEmpty == true)
        }
    }

    @Test(
        "a continued trace keeps the client's sampled and random flags, set or unset; flags Level 2 does not define are sent as zeros",
        arguments: [("00", "00"), ("01", "01"), ("02", "02"), ("03", "03"), ("ff", "03"), ("fd", "01"), ("06", "02"), ("fc", "00")])
    func continuedFlags(sent: String, forwarded: String) async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let traceparent = "00-\(Self.traceID)-\(Self.clientParent)-\(sent)"
            let reply = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", traceparent)])
            #expect(reply.status == 200)
            let parts = try Self.parts(echo.requests.last)
            #expect(parts[1] == Self.traceID && parts[3] == forwarded, "\(sent): \(parts)")
        }
    }

    @Test("a later version is read by its version-00 prefix; an oversized or non-printable tracestate is dropped, two lines joined")
    func laterVersionAndState() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let later = "cc-\(Self.traceID)-\(Self.clientParent)-01-what-comes-next"
            _ = try await h.send(
                .GET, "/api/v2/REF/configuration", headers: [("traceparent", later), ("tracestate", String(repeating: "a", count: 513))])
            #expect(try Self.parts(echo.requests.last)[1] == Self.traceID)
            #expect(echo.requests.last?.header("tracestate").isEmpty == true)
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", Self.incoming), ("tracestate", "a=\u{e9}")])
            #expect(echo.requests.last?.header("tracestate").isEmpty == true)
            _ = try await h.send(
                .GET, "/api/v2/REF/configuration", headers: [("traceparent", Self.incoming), ("tracestate", "a=1"), ("tracestate", "b=2")])
            #expect(echo.requests.last?.header("tracestate") == ["a=1,b=2"])
        }
    }

    @Test("the request and refused log lines carry the trace id")
    func logged() async throws {
        let log = CapturedLog()
        try await withHarness(gatewayLogger: log.logger) { h in
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", Self.incoming)])
            _ = try await h.send(.PUT, "/api/v1/tokens/authn", headers: [("traceparent", Self.incoming)])
        }
        let request = log.lines.first { $0.message == "request" && $0.metadata["route"] == "proxy" }
        let refused = log.lines.first { $0.message == "refused" }
        #expect(request?.metadata["trace_id"] == Self.traceID, "\(log.lines.map(\.metadata))")
        #expect(refused?.metadata["trace_id"] == Self.traceID, "\(log.lines.map(\.metadata))")
    }
}
