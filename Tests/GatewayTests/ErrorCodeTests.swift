import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import NIOCore
import NIOPosix
import SAMLVerification
import ServerSupport
import Testing

/// Every error the gateway answers itself, produced by a real request, never reaching the
/// upstream, in the enhanced error shape.
@Suite("Gateway error codes")
struct ErrorCodeTests {
    /// A refusal: HTTP `status`, samlgate's `reason` in `details`, the backend's `code` (one it
    /// publishes, with its documented action), every field of the enhanced error shape.
    static func expectError(
        _ reply: GatewayHarness.Reply, _ status: Int, _ reason: String, _ code: BackendErrorCode,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reply.status == status, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.reason == reason, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.json?["code"] as? String == code.rawValue, "\(reply.body)", sourceLocation: sourceLocation)
        let json = reply.json ?? [:]
        for key in ["action", "status", "code", "message", "details", "helpUrl", "trace"] {
            #expect(json[key] != nil, "error body lacks \(key)", sourceLocation: sourceLocation)
        }
        #expect(json["action"] as? String == code.action.rawValue, sourceLocation: sourceLocation)
        #expect(json["status"] as? Int == code.status(forHTTP: status), sourceLocation: sourceLocation)
        #expect(json["helpUrl"] as? String == EnhancedError.backendHelpURL, sourceLocation: sourceLocation)
        #expect(json["trace"] as? String == reply.headers.first(name: "X-Request-Id"), sourceLocation: sourceLocation)
    }

    @Test("v1 field validation: missing_parameter for each field, invalid deviceType, unknown_mvpd, a JSON body, duplicate_parameter")
    func v1Fields() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            for missing in ["requestor", "deviceId", "mvpd", "deviceType", "SAMLResponse"] {
                let fields = GatewayHarness.v1Fields(saml).map { $0.0 == missing ? ($0.0, "") : $0 }
                let reply = try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields))
                let code: [String: BackendErrorCode] = [
                    "requestor": .invalidRequestor, "deviceId": .invalidDeviceID, "mvpd": .invalidParameterMVPD,
                    "deviceType": .invalidDeviceInfo, "SAMLResponse": .invalidParameterSAMLResponse,
                ]
                Self.expectError(reply, 400, "missing_parameter", code[missing]!)
                #expect(reply.detail("parameter") == missing)
            }
            var fields = GatewayHarness.v1Fields(saml)
            fields[3] = ("deviceType", "ios")
            Self.expectError(
                try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields)), 400, "invalid_parameter_value", .invalidDeviceInfo
            )
            Self.expectError(try await h.exchangeV1(saml, mvpd: "Nobody"), 400, "unknown_mvpd", .unknownIntegration)
            Self.expectError(
                try await h.send(
                    .POST, "/api/v1/tokens/authn", body: GatewayHarness.form(GatewayHarness.v1Fields(saml)),
                    headers: [("Content-Type", "application/json")]), 400, "unsupported_media_type", .invalidParameterSAMLResponse)
            let doubled = GatewayHarness.form(GatewayHarness.v1Fields(saml) + [("mvpd", "Other")])
            Self.expectError(try await h.send(.POST, "/api/v1/tokens/authn", body: doubled), 400, "duplicate_parameter", .invalidParameterMVPD)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
    }

    @Test("SAMLResponse value errors: malformed base64, broken %, double encoding, not XML, bad UTF-8, broken XML")
    func valueErrors() async throws {
        try await withHarness { h in
            let xml = GatewayHarness.issue()
            Self.expectError(try await h.exchangeV1("PHNhbWw6UmVzcG9uc2"), 400, "malformed_base64", .invalidParameterSAMLResponse)
            let broken = "requestor=REF&deviceId=d&mvpd=Cablevision&deviceType=iOS&SAMLResponse=%ZZ"
            Self.expectError(
                try await h.send(.POST, "/api/v1/tokens/authn", body: broken), 400, "malformed_percent_encoding", .invalidParameterSAMLResponse)
            // The cookbook value encoded once more by the client, then once more by the form: %25 after decoding.
            let twice = GatewayHarness.cookbook(xml).replacingOccurrences(of: "%", with: "%25")
            Self.expectError(try await h.exchangeV1(twice), 400, "double_encoded", .invalidParameterSAMLResponse)
            Self.expectError(
                try await h.exchangeV1(Data("hello world, not xml".utf8).base64EncodedString()), 400, "unrecognized_saml_form",
                .invalidParameterSAMLResponse)
            let badUTF8 = "requestor=REF&deviceId=d&mvpd=Cable%FFvision&deviceType=iOS&SAMLResponse=%3Cx%2F%3E"
            // In the mvpd field: the field's own code.
            Self.expectError(try await h.send(.POST, "/api/v1/tokens/authn", body: badUTF8), 400, "invalid_utf8", .invalidParameterMVPD)
            // Inside the XML too: the document is normalized (and its UTF-8 checked) before it is parsed.
            let badXMLText = "requestor=REF&deviceId=d&mvpd=Cablevision&deviceType=iOS&SAMLResponse=%3Cx%3E%FF%3C%2Fx%3E"
            Self.expectError(try await h.send(.POST, "/api/v1/tokens/authn", body: badXMLText), 400, "invalid_utf8", .invalidParameterSAMLResponse)
            // Base64 of a document the normalization leaves alone (no line break or tab): checked all the same.
            Self.expectError(
                try await h.exchangeV1(Data([0x3C, 0x78, 0x3E, 0xFF, 0x3C, 0x2F, 0x78, 0x3E]).base64EncodedString()), 400, "invalid_utf8",
                .invalidParameterSAMLResponse)
            Self.expectError(try await h.exchangeV1("<samlp:Response"), 400, "malformed_xml", .invalidParameterSAMLResponse)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
    }

    @Test("a full replay cache answers 503 replay_cache_full with Retry-After, forwards nothing, and keeps serving")
    func replayCacheFull() async throws {
        try await withHarness(configure: { $0.replayCapacity = 1 }) { h in
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
            let refused = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()), device: "device-2")
            Self.expectError(refused, 503, "replay_cache_full", .maximumExecutionTimeExceeded)
            #expect(refused.headers.first(name: "Retry-After") == "5")
            #expect(refused.json?["action"] as? String == "retry")
            #expect(h.upstream?.store.exchanges.count == 1)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
    }

    @Test("verification failures answer 400 invalid_parameter_saml_response with the verifier's reason and never reach the upstream")
    func verificationFailures() async throws {
        try await withHarness { h in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            Self.expectError(try await h.exchangeV1(GatewayHarness.base64(forged)), 400, "key_not_trusted", .invalidParameterSAMLResponse)
            let unsigned = GatewayHarness.issue { $0.sign = .none }
            Self.expectError(try await h.exchangeV1(GatewayHarness.base64(unsigned)), 400, "signature_missing", .invalidParameterSAMLResponse)
            let expired = GatewayHarness.issue { $0.now = Date().addingTimeInterval(-7200) }
            Self.expectError(try await h.exchangeV1(GatewayHarness.base64(expired)), 400, "expired", .invalidParameterSAMLResponse)
            let otherAudience = GatewayHarness.issue { $0.audience = "https://elsewhere.example" }
            Self.expectError(try await h.exchangeV1(GatewayHarness.base64(otherAudience)), 400, "wrong_audience", .invalidParameterSAMLResponse)
            var tampered = String(decoding: GatewayHarness.issue(), as: UTF8.self)
            tampered = tampered.replacingOccurrences(of: "alice@example.com", with: "mallory@example.com")
            Self.expectError(try await h.exchangeV1(tampered), 400, "signature_invalid", .invalidParameterSAMLResponse)
            let doctype = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>"
            Self.expectError(try await h.exchangeV1(doctype), 400, "forbidden_dtd", .invalidParameterSAMLResponse)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            let metrics = try await h.send(.GET, "/metrics")
            #expect(metrics.body.contains("samlgate_verification_failures_total{code=\"key_not_trusted\",mvpd=\"\(GatewayHarness.mvpd)\"} 1"))
            #expect(metrics.body.contains("samlgate_exchanges_total{mvpd=\"\(GatewayHarness.mvpd)\",outcome=\"refused\"} 6"))
            #expect(metrics.body.contains("samlgate_exchanges_total{mvpd=\"\(GatewayHarness.mvpd)\",outcome=\"forwarded\"} 0"))
        }
    }

    @Test("an exchange for an MVPD the trust store does not hold is counted under mvpd unknown, never the client's value")
    func unknownMVPDLabel() async throws {
        try await withHarness { h in
            let response = GatewayHarness.base64(GatewayHarness.issue())
            Self.expectError(try await h.exchangeV1(response, mvpd: "Attacker-Chosen-Label"), 400, "unknown_mvpd", .unknownIntegration)
            let metrics = try await h.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_exchanges_total{mvpd=\"unknown\",outcome=\"refused\"} 1"), "\(metrics)")
            #expect(!metrics.contains("Attacker-Chosen-Label"))
        }
    }

    /// The HTTP status and the backend's code of each kind of verifier code are the gateway's
    /// decision (the verifier knows none): the classes the requests above exercise one by one.
    @Test("the verifier's codes answer 400, 500 or 503 with the backend's code for each API")
    func verifierCodeStatuses() {
        let cases: [(VerificationError.Code, Int, BackendErrorCode, BackendErrorCode, Int?)] = [
            (.keyNotTrusted, 400, .invalidParameterSAMLResponse, .invalidParameterSAMLResponse, nil),
            (.expired, 400, .invalidParameterSAMLResponse, .invalidParameterSAMLResponse, nil),
            (.forbiddenDTD, 400, .invalidParameterSAMLResponse, .invalidParameterSAMLResponse, nil),
            (.unknownMVPD, 400, .unknownIntegration, .invalidHeaderPFSProviderIDNotDetermined, nil),
            (.internalError, 500, .internalError, .internalServerError, nil),
            (.replayCacheFull, 503, .maximumExecutionTimeExceeded, .maximumExecutionTimeExceeded, 5),
            (.metadataExpired, 503, .internalError, .internalServerError, nil),
            (.metadataUnavailable, 503, .internalError, .internalServerError, nil),
        ]
        for (code, status, v1, v2, retryAfter) in cases {
            let error = GatewayError(VerificationError(code, "message"))
            #expect(error.status == status, "\(code)")
            #expect(error.backendCode(api: .v1, exchange: true) == v1, "\(code)")
            #expect(error.backendCode(api: .v2, exchange: true) == v2, "\(code)")
            #expect(error.retryAfter == retryAfter, "\(code)")
            #expect(error.code == code && error.code.rawValue == code.rawValue)
            #expect(error.isVerificationFailure)
        }
        #expect(!GatewayError.missingParameter("mvpd").isVerificationFailure)
    }

    @Test("a replayed response is refused the second time")
    func replay() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 204)
            Self.expectError(try await h.exchangeV1(saml, device: "other-device"), 400, "replayed", .invalidParameterSAMLResponse)
            #expect(h.upstream?.store.exchanges.count == 1)
        }
    }

    @Test("a body over the limit answers 413, by Content-Length and while streaming")
    func bodyLimit() async throws {
        try await withHarness(configure: { $0.bodyLimit = 4096 }) { h in
            let big = String(repeating: "A", count: 5000)
            Self.expectError(try await h.exchangeV1(big), 413, "body_too_large", .invalidParameterSAMLResponse)
            let health = try await h.send(.GET, "/healthz")
            #expect(health.status == 200)
        }
    }

    @Test("v2 partner status: each documented state refused with its invalid_header_pfs_* code, missing and unreadable headers")
    func partnerStatus() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            func status(_ status: String?) async throws -> GatewayHarness.Reply { try await h.exchangeV2(saml, status: status) }
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(access: "denied")), 400, "partner_access_not_granted",
                .invalidHeaderPFSPermissionAccessNotGranted)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(access: "restricted")), 400, "partner_access_not_granted",
                .invalidHeaderPFSPermissionAccessNotGranted)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(access: "notDetermined")), 400, "partner_access_undetermined",
                .invalidHeaderPFSPermissionAccessNotDetermined)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(access: "pending")), 400, "partner_access_undetermined",
                .invalidHeaderPFSPermissionAccessNotDetermined)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(permissionError: true)), 400, "partner_framework_error",
                .invalidHeaderPFSPermissionAccessNotDetermined)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(providerError: true)), 400, "partner_provider_error",
                .invalidHeaderPFSProviderIDNotDetermined)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(expires: Date().addingTimeInterval(-60))), 400, "partner_provider_expired",
                .invalidHeaderPFSProviderInfoExpired)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(provider: "someone-else")), 400, "unknown_mvpd",
                .invalidHeaderPFSProviderIDNotDetermined)
            Self.expectError(try await status(nil), 400, "missing_parameter", .invalidHeaderPFSPermissionAccessNotPresent)
            Self.expectError(try await status("!!not base64!!"), 400, "invalid_parameter_value", .invalidHeaderPFSPermissionAccessNotPresent)
            Self.expectError(
                try await status(Data("{\"x\":1}".utf8).base64EncodedString()), 400, "invalid_parameter_value",
                .invalidHeaderPFSPermissionAccessNotPresent)
            Self.expectError(
                try await status(GatewayHarness.partnerStatus(access: "maybe")), 400, "invalid_parameter_value",
                .invalidHeaderPFSPermissionAccessNotPresent)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            // Still a valid exchange afterwards.
            #expect(try await h.exchangeV2(saml).status == 201)
        }
    }

    /// An exchange whose head announces 5,000 bytes of body, with only the first few sent.
    static let incompleteExchange =
        "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: gateway\r\n"
        + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\nrequestor=REF&deviceId=d"

    /// Waits (up to 2 s) until `/metrics` shows exactly one `malformed_request`.
    static func awaitMalformedRequest(_ h: GatewayHarness) async throws -> Bool {
        for _ in 0..<100 {
            if try await h.send(.GET, "/metrics").body.contains("samlgate_errors_total{code=\"malformed_request\"} 1") { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test("a client that breaks the connection mid-body: malformed_request counted, nothing forwarded, the gateway keeps serving")
    func brokenBody() async throws {
        try await withHarness { h in
            let port = Int(h.gatewayURL.split(separator: ":").last!)!
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            // The body can never be complete: the client closes.
            try await channel.writeAndFlush(ByteBuffer(string: Self.incompleteExchange)).get()
            try await channel.close().get()
            #expect(try await Self.awaitMalformedRequest(h))
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
        }
    }

    @Test("an exchange arriving while the workers shut down: 503 overloaded, says so, nothing forwarded")
    func shuttingDown() async throws {
        try await withHarness { h in
            h.gateway.core.pool.shutdown()
            let reply = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
            Self.expectError(reply, 503, "overloaded", .maximumExecutionTimeExceeded)
            #expect(reply.json?["message"] as? String == "the gateway is shutting down")
            #expect(reply.headers.first(name: "Retry-After") != nil)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
    }
}
