import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

/// `samlgate serve` sizes its event loops and workers by the CPUs the process may use (its
/// affinity mask and cgroup quota), not the machine's core count; both are settable and both
/// are in the start-up line.
@Suite("Threads sized to the usable CPUs", .serialized)
struct ThreadSizingTests {
    @Test("pinned to one CPU with taskset: one event loop and one worker, said in the start-up line")
    func pinnedToOneCPU() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let (process, url, line, _) = try ServerProcess.start(
            ["--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust], pinnedTo: "0")
        defer { if process.isRunning { process.terminate() } }
        #expect(line.contains("\"eventLoops\":\"1\"") && line.contains("\"workers\":\"1\""), "\(line)")
        let threads = try Self.threadNames(process.processIdentifier)
        #expect(threads.filter(Self.isEventLoop).count == 1, "\(threads)")
        #expect(threads.filter { $0.hasPrefix("saml-worker-") }.count == 1, "\(threads)")
        #expect(try await ServerProcess.get(url + "/healthz").0 == 200)
    }

    @Test("--event-loops and --workers set the counts whatever the CPUs; the text start-up line names both")
    func explicitCounts() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let (process, _, line, _) = try ServerProcess.start([
            "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--event-loops", "3", "--workers", "2",
            "--log-format", "text",
        ])
        defer { if process.isRunning { process.terminate() } }
        #expect(line.contains("(3 event loops, 2 workers,"), "\(line)")
        let threads = try Self.threadNames(process.processIdentifier)
        #expect(threads.filter(Self.isEventLoop).count == 3, "\(threads)")
        #expect(threads.filter { $0.hasPrefix("saml-worker-") }.count == 2, "\(threads)")
    }

    @Test("event-loops outside 0…1024 stops start-up naming the setting")
    func outOfRange() throws {
        let result = try SamlgateProcess.run([
            "serve", "--event-loops", "2000", "--upstream", "http://127.0.0.1:1", "--trust-store", "/tmp", "--log-format", "text",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("event-loops"), "\(result.stderr)")
    }

    /// NIO's event-loop threads: `NIO-SGLTN-…` in its shared group (the gateway's), `NIO-ELT-…` in others.
    static func isEventLoop(_ name: String) -> Bool {
        name.hasPrefix("NIO-SGLTN-") || name.hasPrefix("NIO-ELT-")
    }

    /// The names of the process's threads (`/proc/<pid>/task/<tid>/comm`).
    static func threadNames(_ pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").compactMap {
            try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
