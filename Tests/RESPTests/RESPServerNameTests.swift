import CLITestSupport
import Foundation
import NIOCore
import NIOPosix
import RESP
import Testing

/// `rediss://` against a real `redis-server` with TLS: a host name is checked against the
/// certificate's DNS names only, an address against its IP address names only.
@Suite("RESP client: TLS server names")
struct RESPServerNameTests {
    /// Whether PING over `rediss://<host>:<port>` trusting `ca` answers. Timeouts far above a
    /// handshake's on a loaded machine: a refused name fails the handshake at once either way.
    static func answers(host: String, port: Int, ca: String) async throws -> Bool {
        let client = try RESPClient(
            url: RedisURL(parsing: "rediss://\(host):\(port)"), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: .seconds(15), commandTimeout: .seconds(15), trustedCertificatesFile: ca)
        defer { Task { await client.shutdown() } }
        return (try? await client.submit(.ping, on: MultiThreadedEventLoopGroup.singleton.next()).get()) == .simpleString("PONG")
    }

    @Test(
        "a certificate naming only IP 127.0.0.1 serves rediss://127.0.0.1 but not rediss://localhost; one naming only DNS localhost the reverse"
    )
    func namesAndAddresses() async throws {
        for (san, byName, byAddress) in [("IP:127.0.0.1", false, true), ("DNS:localhost", true, false)] {
            let directory = TestScratch.directory("samlgate-redis-names")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try RedisServerProcess.selfSignedCertificate(in: directory, san: san)
            try await RedisServerProcess.with(tls: files) { redis in
                let named = try await Self.answers(host: "localhost", port: redis.port, ca: files.certificate)
                let addressed = try await Self.answers(host: "127.0.0.1", port: redis.port, ca: files.certificate)
                #expect(named == byName, "\(san) by name")
                #expect(addressed == byAddress, "\(san) by address")
            }
        }
    }
}
