import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

/// What an HTTP/2 connection ended by a flood leaves behind, in a `samlgate serve` process of its
/// own (its memory is its own): streams opened in the read that ends the connection used to be
/// kept by swift-nio-http2 when the connection was closed from inside its frame processing,
/// about 2.6 KB each, for ever.
@Suite("samlgate serve: HTTP/2 connections ended by a flood", .serialized)
struct HTTP2ConnectionMemoryTests {
    static func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// `connections` connections, each opening 50 exchanges whose bodies never come and then
    /// flooding PINGs, all in one write; each read until the gateway closes it.
    static func flood(port: Int, connections: Int) async throws {
        let frames = RawHTTP2Connection.openExchanges(50) + RawHTTP2Connection.repeated(RawHTTP2Connection.ping, 400)
        for _ in 0..<connections {
            let connection = try RawHTTP2Connection(port: port)
            try? await connection.send(frames)
            _ = try await connection.framesUntilClose()
        }
    }

    @Test("5,000 streams opened in reads that end their connections leave the gateway's memory where it was")
    func nothingHeld() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let (upstream, upstreamURL, _, upstreamPipe) = try ServerProcess.start(["--port", "0"], command: "upstream")
        defer { upstream.terminate() }
        let (gateway, url, _, gatewayPipe) = try ServerProcess.start([
            "--port", "0", "--h2c", "--upstream", upstreamURL, "--trust-store", trust, "--workers", "1",
        ])
        defer { gateway.terminate() }
        _ = (upstreamPipe, gatewayPipe)
        let port = Int(url.split(separator: ":").last!)!
        try await Self.flood(port: port, connections: 100)  // warm-up: pools and arenas at their size
        let before = try Self.residentKiB(gateway.processIdentifier)
        try await Self.flood(port: port, connections: 100)
        try await Self.flood(port: port, connections: 100)
        let after = try Self.residentKiB(gateway.processIdentifier)
        // Held, 10,000 streams would be about 26 MB.
        #expect(after - before < 10_000, "resident memory grew from \(before) KiB to \(after) KiB")
        #expect(gateway.isRunning)
    }
}
