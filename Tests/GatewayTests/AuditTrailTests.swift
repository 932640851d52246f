import CLITestSupport
import Crypto
import Foundation
import Gateway
import GatewayTestSupport
import ServerSupport
import Testing

/// `audit-log` and `audit-key-file`: one JSON line per exchange decided, in a file of its own,
/// with a keyed pseudonym of the user and never the NameID.
@Suite("Audit trail")
struct AuditTrailTests {
    static let key = "an audit key of more than 32 bytes, for the tests"

    /// A fresh audit file path and a key file holding ``key`` (with the editor's line break).
    static func files() throws -> (log: String, key: String) {
        let directory = TestScratch.directory("samlgate-audit")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("audit-key").path
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        return (directory.appendingPathComponent("audit.log").path, keyFile)
    }

    /// A fresh audit file and key file, and the configuration that writes the trail to the one
    /// under the other, then applies `more`.
    static func audited(
        _ more: @escaping (inout GatewayConfiguration) -> Void = { _ in }
    ) throws -> (log: String, configure: (inout GatewayConfiguration) -> Void) {
        let (log, keyFile) = try files()
        return (
            log,
            {
                $0.auditLog = log
                $0.auditKeyFile = keyFile
                more(&$0)
            }
        )
    }

    /// The lines of the audit file once it has `count` (or two seconds have passed). The client
    /// can have its answer a moment before the gateway records the request: the line is queued
    /// then, and written on the audit log's queue.
    static func lines(_ h: GatewayHarness, _ path: String, count: Int) async throws -> [[String: Any]] {
        var text = ""
        for _ in 0..<200 {
            await h.gateway.core.audit?.drain()
            text = try String(contentsOfFile: path, encoding: .utf8)
            if text.split(separator: "\n").count >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// What the test expects of `assertion`: the SHA-256 of the signed Issuer, a NUL and the
    /// assertion's ID, read from the document itself.
    static func assertionHash(_ xml: [UInt8]) throws -> String {
        let text = String(decoding: xml, as: UTF8.self)
        let assertion = try #require(text.range(of: "<saml:Assertion "))
        let rest = text[assertion.upperBound...]
        let idStart = try #require(rest.range(of: " ID=\""))
        let id = rest[idStart.upperBound...].prefix { $0 != "\"" }
        let issuerStart = try #require(rest.range(of: "<saml:Issuer>"))
        let issuer = rest[issuerStart.upperBound...].prefix { $0 != "<" }
        return hex(SHA256.hash(data: Array((issuer + "\u{0}" + id).utf8)))
    }

    @Test("a forwarded exchange: the NameID's HMAC under the key, the assertion's digest, forwarded; never the NameID; the file is 0600")
    func forwardedWithKey() async throws {
        let (log, configure) = try Self.audited()
        try await withHarness(configure: configure) { h in
            let xml = GatewayHarness.issue()
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 204, "\(reply.body)")
            let lines = try await Self.lines(h, log, count: 1)
            let line = try #require(lines.last)
            #expect(lines.count == 1)
            let expectedSubject = Self.hex(
                HMAC<SHA256>.authenticationCode(for: Array("alice@example.com".utf8), using: SymmetricKey(data: Array(Self.key.utf8))))
            #expect(line["subject"] as? String == expectedSubject)
            #expect(line["assertion"] as? String == (try Self.assertionHash(xml)))
            #expect(line["outcome"] as? String == "forwarded")
            #expect(line["status"] as? Int == 204)
            #expect(line["route"] as? String == "v1_tokens_authn")
            #expect(line["mvpd"] as? String == GatewayHarness.mvpd)
            #expect(line["request_id"] as? String == reply.headers.first(name: "X-Request-Id"))
            #expect((line["trace_id"] as? String)?.count == 32)
            #expect(line["reason"] == nil)
            let time = try #require(line["time"] as? String)
            #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
            let stamp = try #require(ISO8601DateFormatter.withMilliseconds.date(from: time))
            #expect(abs(stamp.timeIntervalSinceNow) < 60)
            let text = try String(contentsOfFile: log, encoding: .utf8)
            #expect(!text.contains("alice"))
            let mode = try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            await h.gateway.core.audit?.drain()
            #expect(try await h.metric("samlgate_audit_lines_total") == 1)
            #expect(try await h.metric("samlgate_audit_errors_total") == 0)
        }
    }

    @Test("a forged response: refused with key_not_trusted, no subject, no assertion; an unknown MVPD is unknown")
    func forgedRefused() async throws {
        let (log, configure) = try Self.audited()
        try await withHarness(configure: configure) { h in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            let reply = try await h.exchangeV1(GatewayHarness.base64(forged))
            #expect(reply.status == 403 || reply.status == 401 || reply.status == 400, "\(reply.body)")
            let line = try #require(try await Self.lines(h, log, count: 1).last)
            #expect(line["outcome"] as? String == "refused")
            #expect(line["reason"] as? String == "key_not_trusted")
            #expect(line["status"] as? Int == reply.status)
            #expect(line["mvpd"] as? String == GatewayHarness.mvpd)
            #expect(line["subject"] == nil)
            #expect(line["assertion"] == nil)
            #expect(!(try String(contentsOfFile: log, encoding: .utf8)).contains("mallory"))
            // Refused before anything is verified (an MVPD the trust store does not know): unknown.
            let unknown = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()), mvpd: "Nobody")
            #expect(unknown.status == 400)
            let second = try #require(try await Self.lines(h, log, count: 2).last)
            #expect(second["mvpd"] as? String == "unknown")
            #expect(second["outcome"] as? String == "refused")
            #expect(second["reason"] as? String == "unknown_mvpd")
        }
    }

    @Test("a replayed response (in-process store): refused with replayed, nothing verified reported")
    func replayed() async throws {
        let (log, configure) = try Self.audited()
        try await withHarness(configure: configure) { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 204)
            let again = try await h.exchangeV1(saml)
            #expect(again.status != 204)
            let lines = try await Self.lines(h, log, count: 2)
            #expect(lines.count == 2)
            #expect(lines[1]["reason"] as? String == "replayed")
            #expect(lines[1]["outcome"] as? String == "refused")
            // The in-process replay cache refuses inside verification: nothing verified is reported.
            #expect(lines[1]["subject"] == nil)
        }
    }

    @Test("the subject is the NameID's HMAC byte for byte: two NameIDs that differ by a blank are two subjects")
    func subjectByteForByte() async throws {
        let (log, configure) = try Self.audited()
        try await withHarness(configure: configure) { h in
            // Blanks the cookbook's normalization keeps (a tab would be forwarded as a blank).
            let users = ["alice@example.com", "alice@example.com ", " ", " alice@example.com"]
            for user in users {
                let reply = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue { $0.user = user }))
                #expect(reply.status == 204, "\(reply.body)")
            }
            let lines = try await Self.lines(h, log, count: users.count)
            let subjects = lines.compactMap { $0["subject"] as? String }
            #expect(
                subjects
                    == users.map {
                        Self.hex(HMAC<SHA256>.authenticationCode(for: Array($0.utf8), using: SymmetricKey(data: Array(Self.key.utf8))))
                    })
            #expect(Set(subjects).count == users.count)
        }
    }

    @Test("a replay found in a shared replay store: refused with replayed, with the first time's subject; assertion is the Redis key")
    func replayedShared() async throws {
        try await RedisServerProcess.with { redis in
            let (log, configure) = try Self.audited(SharedReplayStoreTests.redisStore(redis.url))
            try await withHarness(configure: configure) { h in
                let saml = GatewayHarness.base64(GatewayHarness.issue())
                #expect(try await h.exchangeV1(saml).status == 204)
                #expect(try await h.exchangeV1(saml, device: "other-device").status == 400)
                let lines = try await Self.lines(h, log, count: 2)
                #expect(lines.count == 2)
                #expect(lines.last?["reason"] as? String == "replayed")
                #expect(lines.last?["outcome"] as? String == "refused")
                let subject = try #require(lines.first?["subject"] as? String)
                #expect(lines.last?["subject"] as? String == subject)
                let assertion = try #require(lines.first?["assertion"] as? String)
                #expect(lines.last?["assertion"] as? String == assertion)
                #expect(try await SharedReplayStoreTests.keys(redis.url) == ["samlgate:replay:" + assertion])
            }
        }
    }

    @Test("throttled exchanges and v2 exchanges are audited under their routes")
    func throttledAndV2() async throws {
        let (log, configure) = try Self.audited { $0.throttleExchanges = ThrottleRate(rate: 0.001, burst: 0) }
        try await withHarness(configure: configure) { h in
            #expect(try await h.exchangeV2(GatewayHarness.base64(GatewayHarness.issue())).status == 201)
            #expect(try await h.exchangeV2(GatewayHarness.base64(GatewayHarness.issue())).status == 429)
            let lines = try await Self.lines(h, log, count: 2)
            #expect(lines.count == 2)
            #expect(lines.map { $0["route"] as? String } == ["v2_profiles_sso", "v2_profiles_sso"])
            #expect(lines[0]["outcome"] as? String == "forwarded")
            #expect((lines[0]["subject"] as? String)?.count == 64)
            #expect(lines[1]["outcome"] as? String == "refused")
            #expect(lines[1]["reason"] as? String == "throttled")
            #expect(lines[1]["status"] as? Int == 429)
            #expect(lines[1]["mvpd"] as? String == "unknown")
        }
    }

    @Test("no key: no subject field, the assertion digest still there; SAMLGATE_AUDIT_KEY alone is a key")
    func noKey() async throws {
        let (log, _) = try Self.files()
        try await withHarness(configure: { $0.auditLog = log }) { (h: GatewayHarness) async throws in
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
            let line = try #require(try await Self.lines(h, log, count: 1).last)
            #expect(line["subject"] == nil)
            #expect((line["assertion"] as? String)?.count == 64)
            #expect(line["outcome"] as? String == "forwarded")
        }
        var configuration = GatewayConfiguration()
        try configuration.apply(environment: [AuditKey.environmentName: Self.key])
        configuration.upstreams = ["http://127.0.0.1:1"]
        configuration.trustStore = "/nonexistent"
        let validated = try configuration.validated()
        #expect(validated.auditKey?.subject(of: "x") == AuditKey.hmacForTests(Self.key, "x"))
        #expect(validated.auditKeyFromEnvironment == nil)
    }

    @Test("a short key in audit-key-file or SAMLGATE_AUDIT_KEY, or an unreadable file: a configuration error naming the setting, never the key")
    func badKey() async throws {
        let directory = TestScratch.directory("samlgate-audit")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let short = directory.appendingPathComponent("short-key").path
        // 31 bytes and a line break: the line break is not part of the key.
        try Data((String(repeating: "k", count: 31) + "\n").utf8).write(to: URL(fileURLWithPath: short))
        let log = directory.appendingPathComponent("audit.log").path
        for file in [short, "/nonexistent/audit-key"] {
            do {
                try await withHarness(configure: {
                    $0.auditLog = log
                    $0.auditKeyFile = file
                }) { _ in }
                Issue.record("\(file) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("audit-key-file"), "\(error.message)")
                #expect(!error.message.contains("kkkk"), "\(error.message)")
            }
        }
        var configuration = GatewayConfiguration()
        try configuration.apply(environment: [AuditKey.environmentName: "shortkey"])
        configuration.upstreams = ["http://127.0.0.1:1"]
        configuration.trustStore = "/nonexistent"
        #expect {
            _ = try configuration.validated()
        } throws: { error in
            let message = (error as? ConfigurationError)?.message ?? ""
            return message.contains("SAMLGATE_AUDIT_KEY") && !message.contains("shortkey")
        }
        // A file wins over the variable: a good file with a short variable is accepted.
        let good = try Self.files().key
        configuration.auditKeyFile = good
        #expect(try configuration.validated().auditKey != nil)
    }

    @Test("an audit log whose writes fail (/dev/full): the exchange is answered, the failure counted")
    func writeFailure() async throws {
        try await withHarness(configure: { $0.auditLog = "/dev/full" }) { (h: GatewayHarness) async throws in
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
            // The line may be queued a moment after the answer (see ``lines(_:_:count:)``).
            var errors = 0.0
            for _ in 0..<200 where errors == 0 {
                await h.gateway.core.audit?.drain()
                errors = try await h.metric("samlgate_audit_errors_total")
                if errors == 0 { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(errors == 1)
            #expect(try await h.metric("samlgate_audit_lines_total") == 0)
        }
    }

    @Test("a path that cannot be opened stops start-up, naming audit-log")
    func unopenable() async throws {
        do {
            try await withHarness(configure: { $0.auditLog = "/nonexistent/dir/audit.log" }) { _ in }
            Issue.record("accepted")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("audit-log"), "\(error.message)")
        }
    }
}

extension ISO8601DateFormatter {
    fileprivate static var withMilliseconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

extension AuditKey {
    /// The HMAC computed here, apart from the gateway's code.
    fileprivate static func hmacForTests(_ key: String, _ nameID: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Array(nameID.utf8), using: SymmetricKey(data: Array(key.utf8))).map { String(format: "%02x", $0) }
            .joined()
    }
}
