import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Active health checks (`upstream-health-path`), as HAProxy's `check inter … rise … fall …`:
/// every upstream gets `GET <path>` on a connection of its own every `upstream-health-interval`;
/// `upstream-health-fall` failures in a row take it out of rotation and out of `/readyz`'s count,
/// `upstream-health-rise` passes in a row put it back. Passive health is untouched: an upstream
/// is in rotation only while neither the cool-down nor the checks hold it out
/// (``UpstreamEndpoint/isHealthy(at:)``).
///
/// Passive health alone is blind without traffic: a dead backend nobody sends to looks healthy
/// again once its cool-down ends, so `/readyz` and `SamlgateNoHealthyUpstream` say all is well
/// while it is still down. The probes see it whether or not requests flow.
///
/// Each upstream starts in rotation (a gateway starting beside its backend must not wait
/// `rise` probes to serve) and is probed on one event loop by a repeated task, so its tally
/// never sees two probes at once.
package final class UpstreamHealthChecker: Sendable {
    private let probes: [UpstreamProbe]
    private let interval: TimeAmount
    private let running = Mutex<[RepeatedTask]>([])

    /// `nil` when `upstream-health-path` is unset: passive health only.
    package init?(core: GatewayCore, eventLoopGroup: any EventLoopGroup) {
        let configuration = core.configuration
        guard let path = configuration.upstreamHealthPath else { return nil }
        interval = TimeAmount(seconds: configuration.upstreamHealthInterval)
        let timeout = TimeAmount(seconds: configuration.upstreamHealthTimeout)
        let tls = core.upstream.tls
        probes = core.upstream.endpoints.map { endpoint in
            UpstreamProbe(
                endpoint: endpoint, path: path, timeout: timeout, rise: configuration.upstreamHealthRise,
                fall: configuration.upstreamHealthFall, tls: tls, eventLoop: eventLoopGroup.next(),
                metrics: core.metrics.upstreamProbeMetrics(endpoint: endpoint.baseURL), logger: core.logger)
        }
    }

    /// Starts probing every upstream, the first probe one interval from now.
    package func start() {
        running.withLock { tasks in
            guard tasks.isEmpty else { return }
            for probe in probes {
                probe.reset()
                tasks.append(
                    probe.eventLoop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { _ in
                        probe.run()
                    })
            }
        }
    }

    /// Stops the probes: none starts after this returns, and one still in flight is cut short
    /// (its connection closed, its result dropped).
    package func stop() async {
        let tasks: [RepeatedTask] = running.withLock { tasks in
            let stopping = tasks
            tasks = []
            return stopping
        }
        for (task, probe) in zip(tasks, probes) {
            let cancelled = probe.eventLoop.makePromise(of: Void.self)
            task.cancel(promise: cancelled)
            try? await cancelled.futureResult.get()
        }
        for probe in probes { probe.stop() }
    }
}

/// Runs the checker with the gateway: started with the service group, stopped at shutdown.
struct UpstreamHealthCheckService: Service {
    let checker: UpstreamHealthChecker

    func run() async throws {
        checker.start()
        try? await gracefulShutdown()
        await checker.stop()
    }
}

/// One upstream's probes and its tally of them.
final class UpstreamProbe: Sendable {
    enum Outcome: Sendable {
        case up
        /// Why, for the log line of the transition: never more than a status or an error's kind.
        case down(String)
    }

    private struct Tally {
        var down = false
        var passes = 0
        var failures = 0
        var stopped = false
        /// The latest probe's promise, completed early by ``stop()``.
        var inFlight: EventLoopPromise<Outcome>?
    }

    let endpoint: UpstreamEndpoint
    let eventLoop: any EventLoop
    private let head: HTTPRequestHead
    private let timeout: TimeAmount
    private let rise: Int
    private let fall: Int
    private let tls: UpstreamTLS?
    private let metrics: UpstreamProbeMetrics
    private let logger: Logger
    private let tally = Mutex<Tally>(Tally())

    init(
        endpoint: UpstreamEndpoint, path: String, timeout: TimeAmount, rise: Int, fall: Int, tls: UpstreamTLS?, eventLoop: any EventLoop,
        metrics: UpstreamProbeMetrics, logger: Logger
    ) {
        self.endpoint = endpoint
        self.eventLoop = eventLoop
        // Below the base URL's path, as a forwarded request's path is; a connection per probe.
        head = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: endpoint.pathPrefix + path,
            headers: HTTPHeaders([("Host", endpoint.authority), ("User-Agent", "samlgate-health-check"), ("Connection", "close")]))
        self.timeout = timeout
        self.rise = rise
        self.fall = fall
        self.tls = endpoint.usesTLS ? tls : nil
        self.metrics = metrics
        self.logger = logger
        metrics.up.set(1.0)
    }

    /// In rotation, with a clean tally: where every start begins.
    func reset() {
        tally.withLock { $0 = Tally() }
        endpoint.setProbedDown(false)
        metrics.up.set(1.0)
    }

    /// Ends a probe in flight (its connection closes) and drops every result from now on.
    func stop() {
        let current: EventLoopPromise<Outcome>? = tally.withLock { tally in
            tally.stopped = true
            return tally.inFlight
        }
        current?.succeed(.down("stopped"))
    }

    /// One probe and its verdict; the repeated task waits for it before it schedules the next.
    func run() -> EventLoopFuture<Void> {
        attempt().map { outcome in self.record(outcome) }
    }

    /// `GET <path>` on a new connection: up on a 2xx or 3xx head within the timeout.
    private func attempt() -> EventLoopFuture<Outcome> {
        let promise = eventLoop.makePromise(of: Outcome.self)
        tally.withLock { $0.inFlight = promise }
        // A promise completed twice keeps its first result: the deadline, the answer, an error
        // and the close all race to complete it, and the first one decides.
        let deadline = eventLoop.scheduleTask(in: timeout) { promise.succeed(.down("timeout")) }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        let head = self.head
        let tls = self.tls?.context
        let endpoint = self.endpoint
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try UpstreamConnectionPool.addClientHandlers(channel.pipeline.syncOperations, tls: tls, endpoint: endpoint)
                    try channel.pipeline.syncOperations.addHandler(UpstreamProbeHandler(head: head, promise: promise))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                case .failure(let error):
                    promise.succeed(.down(UpstreamFailure.connecting(error).summary))
                }
            }
        return promise.futureResult
    }

    /// What one probe's result did to the tally.
    private enum Step {
        case unchanged
        case wentDown
        case cameBack
        /// After ``stop()``: the result of a probe still in flight at shutdown, dropped.
        case dropped
    }

    /// Counts the probe and moves the tally; applies and logs a transition, once per transition.
    private func record(_ outcome: Outcome) {
        let rise = self.rise, fall = self.fall
        let step: Step = tally.withLock { tally in
            guard !tally.stopped else { return .dropped }
            switch outcome {
            case .up:
                tally.failures = 0
                tally.passes = min(tally.passes + 1, rise)
                guard tally.down, tally.passes >= rise else { return .unchanged }
                tally.down = false
                return .cameBack
            case .down:
                tally.passes = 0
                tally.failures = min(tally.failures + 1, fall)
                guard !tally.down, tally.failures >= fall else { return .unchanged }
                tally.down = true
                return .wentDown
            }
        }
        guard step != .dropped else { return }
        switch outcome {
        case .up: metrics.passed.increment()
        case .down: metrics.failed.increment()
        }
        switch (step, outcome) {
        case (.wentDown, .down(let reason)):
            endpoint.setProbedDown(true)
            metrics.up.set(0.0)
            logger.warning(
                "upstream down by health checks: out of rotation",
                metadata: ["upstream": .string(endpoint.baseURL), "failures": .stringConvertible(fall), "reason": .string(reason)])
        case (.cameBack, _):
            endpoint.setProbedDown(false)
            metrics.up.set(1.0)
            logger.info(
                "upstream up by health checks: back in rotation",
                metadata: ["upstream": .string(endpoint.baseURL), "passes": .stringConvertible(rise)])
        default:
            break
        }
    }
}

/// Sends the probe's request once the connection is up and completes the promise with the
/// answer's status; anything else that ends the connection first is a failed probe.
final class UpstreamProbeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let promise: EventLoopPromise<UpstreamProbe.Outcome>

    init(head: HTTPRequestHead, promise: EventLoopPromise<UpstreamProbe.Outcome>) {
        self.head = head
        self.promise = promise
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let answer) = unwrapInboundIn(data) else { return }
        let code = answer.status.code
        // An interim answer (100, 103): the final one follows. The gateway asks for no upgrade,
        // so a 101 is a failure like any other status outside 2xx and 3xx.
        if code < 200 && code != 101 { return }
        promise.succeed((200..<400).contains(code) ? .up : .down("status \(code)"))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.succeed(.down(UpstreamFailure.broken(error).summary))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.succeed(.down("connection closed before an answer"))
        context.fireChannelInactive()
    }
}
