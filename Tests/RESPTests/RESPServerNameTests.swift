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
    /// A self-signed certificate (its own CA) whose only subject alternative name is `san`.
    static func certificate(san: String, in directory: URL) throws -> (certificate: String, key: String) {
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-subj", "/CN=redis-test",
            "-addext", "subjectAltName=\(san)", "-days", "1",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        return (certificate, key)
    }

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
            let files = try Self.certificate(san: san, in: directory)
            try await RedisServerProcess.with(tls: files) { redis in
                let named = try await Self.answers(host: "localhost", port: redis.port, ca: files.certificate)
                let addressed = try await Self.answers(host: "127.0.0.1", port: redis.port, ca: files.certificate)
                #expect(named == byName, "\(san) by name")
                #expect(addressed == byAddress, "\(san) by address")
            }
        }
    }
}
