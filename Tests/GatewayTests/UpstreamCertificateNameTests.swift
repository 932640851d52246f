import Foundation
import GatewayTestSupport
import ServerSupport
import Testing

@testable import Gateway

/// An `https://` upstream's certificate names the host the gateway was told to reach, as RFC 6125
/// reads it (``UpstreamCertificateName``): a DNS name by a DNS subject alternative name, an
/// address by an IP-address name, never by the common name or by the address connected to.
@Suite("Upstream TLS: the certificate names the upstream's host")
struct UpstreamCertificateNameTests {
    @Test(
        "DNS names: equal (case, trailing dot aside), or a wildcard first label standing for one label, never for a top-level domain alone",
        arguments: [
            ("backend.example", "backend.example", true), ("Backend.Example.", "backend.example", true),
            ("*.internal.example", "backend.internal.example", true), ("*.internal.example", "a.backend.internal.example", false),
            ("*.internal.example", "internal.example", false), ("*.example", "backend.example", false),
            ("b*.internal.example", "backend.internal.example", false), ("other.example", "backend.example", false),
        ])
    func dnsNames(_ name: String, _ host: String, _ expected: Bool) {
        #expect(CertificateName.matches(host: host, dnsName: name) == expected)
    }

    /// A backend (a gateway serving TLS) whose certificate carries `names`, reached as `https://localhost`.
    static func reach(names: [String]) async throws -> GatewayHarness.Reply {
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("backend", commonName: "localhost", names: names)
        var reply: GatewayHarness.Reply?
        try await withHarness(configure: {
            $0.tlsCertificate = certificate
            $0.tlsKey = key
            $0.plainPort = 0
        }) { (backend: GatewayHarness) async throws in
            let port = TLSListenerTests.port(backend)
            try await withHarness(upstreamURL: "https://localhost:\(port)", configure: { $0.upstreamCA = pki.caPath }) {
                (front: GatewayHarness) async throws in
                reply = try await front.send(.GET, "/api/v1/config/REF")
            }
        }
        return try #require(reply)
    }

    @Test("https://localhost reaches a backend whose certificate names localhost")
    func named() async throws {
        let reply = try await Self.reach(names: ["localhost"])
        #expect(reply.status == 200, "\(reply.body)")
    }

    @Test(
        "https://localhost refuses a certificate naming only the address connected to, or only a common name (502 upstream_unavailable)",
        arguments: ["address only", "common name only"])
    func refused(_ kind: String) async throws {
        let reply = try await Self.reach(names: kind == "address only" ? ["127.0.0.1"] : [])
        #expect(reply.status == 502 && reply.reason == "upstream_unavailable", "\(kind): \(reply.body)")
    }
}
