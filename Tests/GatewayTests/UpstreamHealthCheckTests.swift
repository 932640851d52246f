import AsyncHTTPClient
import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import Logging
import NIOCore
import NIOHTTP1
import ReferenceUpstream
import ServerSupport
import Synchronization
import Testing

/// Active health checks (`upstream-health-path`): a backend that dies is out of `/readyz` and
/// out of rotation after `fall` failed probes whether or not traffic flows, stays out past the
/// passive cool-down, and is back after `rise` passed probes once it answers again.
@Suite("Upstream health checks")
struct UpstreamHealthCheckTests {
    static let interval = 0.2
    static let rise = 2
    static let fall = 2
    /// Room for a loaded machine on top of what the probes themselves take.
    static let slack = TestTiming.seconds(15)
    static let downMessage = "upstream down by health checks: out of rotation"
    static let upMessage = "upstream up by health checks: back in rotation"

    /// Probes every 0.2 s of a path the reference upstream answers 200; a cool-down as short, so
    /// a backend that stays out longer than it is held out by the probes, not by passive health.
    static func probing(_ configuration: inout GatewayConfiguration) {
        configuration.upstreamHealthPath = "/reference/exchanges"
        configuration.upstreamHealthInterval = interval
        // Long: a live backend slow to answer on a loaded machine must not be probed down (a
        // stopped one refuses the connection at once, whatever the timeout).
        configuration.upstreamHealthTimeout = 5
        configuration.upstreamHealthRise = rise
        configuration.upstreamHealthFall = fall
        configuration.upstreamCooldown = interval
    }

    @Test("the settings: off by default, read from the file, the environment and flags; bad values refused")
    func settings() throws {
        var configuration = GatewayConfiguration()
        #expect(configuration.upstreamHealthPath == nil)
        #expect(configuration.upstreamHealthInterval == 5 && configuration.upstreamHealthTimeout == 2)
        #expect(configuration.upstreamHealthRise == 2 && configuration.upstreamHealthFall == 3)
        try configuration.apply(yaml: "upstream-health-path: /healthz\nupstream-health-interval: 0.5\n", path: "test.yaml")
        #expect(configuration.upstreamHealthPath == "/healthz" && configuration.upstreamHealthInterval == 0.5)
        try configuration.apply(environment: ["SAMLGATE_UPSTREAM_HEALTH_FALL": "4", "SAMLGATE_UPSTREAM_HEALTH_TIMEOUT": "0.25"])
        #expect(configuration.upstreamHealthFall == 4 && configuration.upstreamHealthTimeout == 0.25)
        try configuration.apply(.upstreamHealthRise, value: "1", source: "--upstream-health-rise")
        #expect(configuration.upstreamHealthRise == 1)
        try configuration.apply(.upstreamHealthPath, value: "none", source: "--upstream-health-path")
        #expect(configuration.upstreamHealthPath == nil)
        let bad: [(GatewaySetting, String)] = [
            (.upstreamHealthPath, "healthz"), (.upstreamHealthPath, "/a b"), (.upstreamHealthPath, "/a#b"),
            (.upstreamHealthInterval, "0"), (.upstreamHealthInterval, "0.01"), (.upstreamHealthTimeout, "-1"),
            (.upstreamHealthRise, "0"), (.upstreamHealthFall, "many"),
        ]
        for (setting, value) in bad {
            #expect(throws: ConfigurationError.self, "\(setting.rawValue) \(value)") {
                try configuration.apply(setting, value: value, source: "--\(setting.rawValue)")
            }
        }
    }

    @Test("off by default: no probe metric, passive health only")
    func offByDefault() async throws {
        try await withHarness { h in
            #expect(try await h.send(.GET, "/reference/echo/off").status == 200)
            let exposition = try await h.send(.GET, "/metrics").body
            #expect(!exposition.contains("samlgate_upstream_probe_up"))
            #expect(!exposition.contains("samlgate_upstream_health_checks_total"))
        }
    }

    @Test(
        "no traffic: a backend stopped is out of /readyz within fall probes and stays out past the cool-down; restarted, it is back within rise probes; probes counted, each transition logged once"
    )
    func noTraffic() async throws {
        let backend = try await RestartableUpstream.start()
        let log = CapturedLog()
        do {
            try await withHarness(upstreamURL: backend.url, gatewayLogger: log.logger, configure: Self.probing) { h in
                // Probes pass: counted, the gauge 1, ready.
                #expect(try await Self.eventually(within: Self.slack) { try await Self.probes(h, backend.url, "up") >= 2 })
                #expect(try await Self.probeUp(h, backend.url) == 1)
                #expect(try await Self.readiness(h) == .init(status: 200, healthy: 1))

                await backend.stop()
                #expect(
                    try await Self.eventually(within: Double(Self.fall) * Self.interval + Self.slack) {
                        try await Self.readiness(h) == .init(status: 503, healthy: 0)
                    })
                #expect(try await Self.probeUp(h, backend.url) == 0)
                // Several cool-downs later, with nothing sent, still out: the probes hold it.
                for _ in 0..<8 {
                    #expect(try await Self.readiness(h) == .init(status: 503, healthy: 0))
                    try await Task.sleep(for: .seconds(Self.interval / 2))
                }
                #expect(try await Self.eventually(within: Self.slack) { try await Self.probes(h, backend.url, "down") >= 5 })
                // One line per transition, never per probe: down and up alternate, starting down.
                // (Not exactly one: while the backend is stopped, a parallel test's server may be
                // given its port for a moment, and the probes then rightly see it up.)
                #expect(Self.transitionsAlternate(log, backend.url, endingDown: true), "\(Self.transitions(log, backend.url))")

                try await backend.restart()
                #expect(
                    try await Self.eventually(within: Double(Self.rise) * Self.interval + Self.slack) {
                        try await Self.readiness(h) == .init(status: 200, healthy: 1)
                    })
                #expect(try await Self.probeUp(h, backend.url) == 1)
                #expect(try await Self.eventually(within: Self.slack) { try await Self.probes(h, backend.url, "up") >= 4 })
                #expect(Self.transitionsAlternate(log, backend.url, endingDown: false), "\(Self.transitions(log, backend.url))")
            }
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test("traffic to two upstreams: one stopped gets no request once probed down, past its cool-downs; restarted, it gets requests again")
    func withTraffic() async throws {
        let backend = try await RestartableUpstream.start()
        do {
            try await withHarness(configure: { configuration in
                configuration.upstreams = [backend.url] + configuration.upstreams
                Self.probing(&configuration)
            }) { h in
                let answered = "samlgate_upstream_duration_seconds_count{upstream=\"\(backend.url)\"}"
                // Round-robin: the backend gets its share.
                #expect(
                    try await Self.eventually(within: Self.slack) {
                        _ = try await h.send(.GET, "/reference/echo/before")
                        return try await h.metric(answered) > 0
                    })

                await backend.stop()
                // Meanwhile requests still go out (a refused connection is retried on the other
                // upstream); what they get is not the point here.
                #expect(
                    try await Self.eventually(within: Double(Self.fall) * Self.interval + Self.slack) {
                        _ = try? await h.send(.GET, "/reference/echo/during")
                        return try await Self.probeUp(h, backend.url) == 0
                    })
                let readiness = try await Self.readiness(h)
                #expect(readiness == .init(status: 200, healthy: 1), "\(readiness)")
                // Over several cool-downs: every request answered by the live upstream, and not
                // one connection tried to the dead one.
                let refused = "samlgate_upstream_errors_total{upstream=\"\(backend.url)\",kind=\"connect\"}"
                let refusedBefore = try await h.metric(refused)
                let started = ContinuousClock.now
                var sent = 0
                while sent < 20 || ContinuousClock.now - started < .seconds(4 * Self.interval) {
                    let reply = try await h.send(.GET, "/reference/echo/after-\(sent)")
                    #expect(reply.status == 200, "\(reply.body)")
                    sent += 1
                }
                #expect(try await h.metric(refused) == refusedBefore, "a request went to the upstream the probes hold out")

                let answeredBefore = try await h.metric(answered)
                try await backend.restart()
                #expect(
                    try await Self.eventually(within: Double(Self.rise) * Self.interval + Self.slack) {
                        _ = try await h.send(.GET, "/reference/echo/back")
                        return try await h.metric(answered) > answeredBefore
                    })
                #expect(try await Self.probeUp(h, backend.url) == 1)
            }
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test("an upstream that accepts connections but answers its probes 500 is held out: every request goes to the other one")
    func failingProbesHoldOut() async throws {
        let failing = try await FaultyUpstream.start(.status500)
        do {
            try await withHarness(configure: { configuration in
                configuration.upstreams = [failing.url] + configuration.upstreams
                Self.probing(&configuration)
            }) { h in
                #expect(
                    try await Self.eventually(within: Double(Self.fall) * Self.interval + Self.slack) {
                        try await Self.probeUp(h, failing.url) == 0
                    })
                #expect(try await Self.probes(h, failing.url, "down") >= Double(Self.fall))
                let readiness = try await Self.readiness(h)
                #expect(readiness == .init(status: 200, healthy: 1), "\(readiness)")
                // It answers everything 500: one request reaching it would show.
                for index in 0..<20 {
                    let reply = try await h.send(.GET, "/reference/echo/\(index)")
                    #expect(reply.status == 200, "\(reply.body)")
                }
            }
        } catch {
            await failing.stop()
            throw error
        }
        await failing.stop()
    }

    // MARK: helpers

    /// Polls `condition` until it holds or `seconds` have passed.
    static func eventually(within seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return try await condition()
    }

    /// `/readyz`'s status and `upstreamsHealthy`.
    struct Readiness: Equatable, CustomStringConvertible {
        var status: Int
        var healthy: Int?

        var description: String { "\(status), upstreamsHealthy \(healthy.map(String.init) ?? "absent")" }
    }

    static func readiness(_ h: GatewayHarness) async throws -> Readiness {
        let reply = try await h.send(.GET, "/readyz")
        return Readiness(status: reply.status, healthy: reply.json?["upstreamsHealthy"] as? Int)
    }

    /// `samlgate_upstream_health_checks_total` of `upstream` and `result`, whatever the label order; 0 when absent.
    static func probes(_ h: GatewayHarness, _ upstream: String, _ result: String) async throws -> Double {
        let exposition = try await h.send(.GET, "/metrics").body
        let line = exposition.split(separator: "\n").first {
            $0.hasPrefix("samlgate_upstream_health_checks_total{") && $0.contains("upstream=\"\(upstream)\"") && $0.contains("result=\"\(result)\"")
        }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// `samlgate_upstream_probe_up` of `upstream`; `nil` when there is no such series.
    static func probeUp(_ h: GatewayHarness, _ upstream: String) async throws -> Double? {
        let exposition = try await h.send(.GET, "/metrics").body
        let prefix = "samlgate_upstream_probe_up{upstream=\"\(upstream)\"} "
        return exposition.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    /// The lines logged with `message` for `upstream`.
    /// The transitions logged for `upstream`, in order: `true` for down.
    static func transitions(_ log: CapturedLog, _ upstream: String) -> [Bool] {
        log.lines.filter { ($0.message == downMessage || $0.message == upMessage) && $0.metadata["upstream"] == upstream }
            .map { $0.message == downMessage }
    }

    /// Down first, then up and down in turn (never the same transition twice in a row), the last
    /// one `endingDown`.
    static func transitionsAlternate(_ log: CapturedLog, _ upstream: String, endingDown: Bool) -> Bool {
        let logged = transitions(log, upstream)
        return logged.first == true && logged.last == endingDown && zip(logged, logged.dropFirst()).allSatisfy { $0 != $1 }
    }
}

/// The reference upstream as a backend that dies and comes back: stopped, then started again on
/// the port it first bound, which the gateway knows it by.
actor RestartableUpstream {
    let url: String
    private let port: Int
    private var server: ReferenceUpstreamServer?
    private var task: Task<Void, any Error>?

    /// Whether a server's run ended in an error (its port taken, most likely).
    private final class Exit: Sendable {
        let failed = Mutex<Bool>(false)
    }

    struct RestartFailed: Error {
        let port: Int
    }

    private init(port: Int, server: ReferenceUpstreamServer, task: Task<Void, any Error>) {
        self.port = port
        url = "http://127.0.0.1:\(port)"
        self.server = server
        self.task = task
    }

    static func start() async throws -> RestartableUpstream {
        let server = makeServer(port: 0)
        let task = Task { try await server.run() }
        let port = await server.port.value()
        return RestartableUpstream(port: port, server: server, task: task)
    }

    /// Stops it (a graceful shutdown: open connections closed); nothing when already stopped.
    func stop() async {
        let server = self.server, task = self.task
        self.server = nil
        self.task = nil
        await server?.stop()
        _ = try? await task?.value
    }

    /// Starts it again on the same port, and returns once it answers. Another process may hold
    /// the port for a moment (an outgoing connection's): tried again until the deadline.
    func restart() async throws {
        let deadline = ContinuousClock.now + .seconds(TestTiming.seconds(10))
        while ContinuousClock.now < deadline {
            let server = Self.makeServer(port: port)
            let ended = Exit()
            self.server = server
            task = Task.detached {
                do {
                    try await server.run()
                } catch {
                    ended.failed.withLock { $0 = true }
                    throw error
                }
            }
            while ContinuousClock.now < deadline, !ended.failed.withLock({ $0 }) {
                if await Self.answers(url) { return }
                try await Task.sleep(for: .milliseconds(25))
            }
            await stop()
            try await Task.sleep(for: .milliseconds(100))
        }
        throw RestartFailed(port: port)
    }

    private static func makeServer(port: Int) -> ReferenceUpstreamServer {
        ReferenceUpstreamServer(
            host: "127.0.0.1", port: port, configuration: GatewayHarness.upstreamConfiguration,
            logger: Logger(label: "backend", factory: { _ in SwiftLogNoOpLogHandler() }), signals: false)
    }

    private static func answers(_ url: String) async -> Bool {
        (try? await GatewayHarness.request(.GET, url + "/reference/exchanges", body: nil, headers: []))?.status == 200
    }
}
