import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import TestIdP
import Testing

/// `trust-store-poll`: a trust store published the way Kubernetes publishes a mounted ConfigMap
/// or Secret (a fresh timestamped directory, then the `..data` symlink swapped), with no signal.
@Suite("Trust store poll")
struct TrustStorePollTests {
    /// `<root>/..data -> ..<version>`, `<root>/Cablevision -> ..data/Cablevision`, as the kubelet lays it out.
    struct MountedStore {
        let root: URL

        init() throws {
            root = TestScratch.directory("samlgate-mounted")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }

        /// Writes a version holding `pem` (nil: an entry with no certificate, a broken store) and swaps `..data` to it.
        func publish(_ version: String, pem: String?) throws {
            let fm = FileManager.default
            let dir = root.appendingPathComponent("..\(version)/\(GatewayHarness.mvpd)")
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
            if let pem { try pem.write(to: dir.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8) }
            try GatewayHarness.platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
            let temporary = root.appendingPathComponent("..data_tmp").path
            try? fm.removeItem(atPath: temporary)
            try fm.createSymbolicLink(atPath: temporary, withDestinationPath: "..\(version)")
            guard rename(temporary, root.appendingPathComponent("..data").path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            let entry = root.appendingPathComponent(GatewayHarness.mvpd).path
            if (try? fm.destinationOfSymbolicLink(atPath: entry)) == nil {
                try fm.createSymbolicLink(atPath: entry, withDestinationPath: "..data/\(GatewayHarness.mvpd)")
            }
        }
    }

    @Test("a symlink swap of the mounted store reloads it without a signal; a broken one keeps the previous store, counted")
    func symlinkSwap() async throws {
        let mounted = try MountedStore()
        defer { try? FileManager.default.removeItem(at: mounted.root) }
        let stranger = try IdPKeyPair.generate(.rsa2048, commonName: "someone else")
        try mounted.publish("2026_11_25_10_00_00.1", pem: stranger.certificatePEM)
        try await withHarness(configure: {
            $0.trustStore = mounted.root.path
            $0.trustStorePoll = 0.1
        }) { h in
            ErrorCodeTests.expectError(
                try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())), 400, "key_not_trusted", .invalidParameterSAMLResponse)

            try mounted.publish("2026_11_25_10_05_00.2", pem: GatewayHarness.idpPair.certificatePEM)
            var status = 0
            for _ in 0..<50 where status != 204 {
                try await Task.sleep(for: .milliseconds(100))
                status = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status
            }
            #expect(status == 204)
            var metrics = try await h.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_trust_store_reloads_total{result=\"ok\"} 1"), "\(metrics)")

            try mounted.publish("2026_11_25_10_10_00.3", pem: nil)
            var failed = false
            for _ in 0..<50 where !failed {
                try await Task.sleep(for: .milliseconds(100))
                metrics = try await h.send(.GET, "/metrics").body
                failed = metrics.contains("samlgate_trust_store_reloads_total{result=\"failed\"} 1")
            }
            #expect(failed, "\(metrics)")
            // The previous store stays in force, and the broken version is not retried every period.
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
            try await Task.sleep(for: .milliseconds(400))
            metrics = try await h.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_trust_store_reloads_total{result=\"failed\"} 1"), "\(metrics)")
        }
    }
}
