import AsyncHTTPClient
import Dispatch
import Gateway
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Exports the recorded spans over OTLP/HTTP (protobuf): every ``OTLPExportSettings/scheduleDelay``,
/// or as soon as a batch is full, whatever is queued, in POSTs of at most
/// ``OTLPExportSettings/batchSize`` spans. Encoding and sending happen on this service's task,
/// never on an event loop.
///
/// A collector that cannot be reached or answers an error loses that batch: it is logged
/// (`warning`, at most one line a minute, with the spans lost since the last line) and the
/// gateway goes on; requests never wait for the exporter. At shutdown, once the gateway has
/// drained its requests (this service is shut down last), what is left is sent within
/// ``OTLPExportSettings/shutdownTimeout``.
final class OTLPSpanExporter: Service {
    private let settings: OTLPExportSettings
    private let queue: SpanQueue
    private let encoder: OTLPTraceEncoder
    private let logger: Logger
    private let warnings = WarningThrottle(intervalNanoseconds: 60_000_000_000)
    /// Spans lost since the last warning written (dropped from a full queue or in a failed export).
    private let lost = Mutex(0)

    init(settings: OTLPExportSettings, queue: SpanQueue, logger: Logger) {
        self.settings = settings
        self.queue = queue
        self.logger = logger
        encoder = OTLPTraceEncoder(resourceAttributes: [("service.name", settings.serviceName)] + settings.resourceAttributes)
    }

    func run() async throws {
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        let queue = self.queue
        let delay = settings.scheduleDelay
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                queue.tick()
            }
        }
        await withGracefulShutdownHandler {
            for await _ in queue.wakes { await exportQueued(on: client, until: nil) }
        } onGracefulShutdown: {
            queue.finish()
        }
        ticker.cancel()
        await exportQueued(on: client, until: .now() + settings.shutdownTimeout)
        try? await client.shutdown()
    }

    /// Sends what is queued, a batch at a time; with a deadline (at shutdown) what would not be
    /// sent by then is given up.
    private func exportQueued(on client: HTTPClient, until deadline: NIODeadline?) async {
        let (spans, dropped) = queue.takeAll()
        if dropped > 0 { lose(dropped, because: "the queue was full (\(queue.capacity) spans): lower tracing-sample-ratio") }
        var start = spans.startIndex
        while start < spans.endIndex {
            let end = min(start + settings.batchSize, spans.endIndex)
            let batch = spans[start..<end]
            start = end
            var timeout = settings.timeout
            if let deadline {
                let left = deadline - .now()
                guard left > .zero else {
                    lose(spans.endIndex - batch.startIndex, because: "the shutdown's time for the last export was up")
                    return
                }
                timeout = min(timeout, left)
            }
            if let failure = await send(encoder.encode(batch), on: client, timeout: timeout) {
                lose(batch.count, because: failure)
            }
        }
    }

    /// One POST; `nil` when the collector took it (2xx), else why not.
    private func send(_ body: [UInt8], on client: HTTPClient, timeout: TimeAmount) async -> String? {
        var request = HTTPClientRequest(url: settings.endpoint)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-protobuf")
        for (name, value) in settings.headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: timeout)
            // Read (and drop) the answer so that the connection can be kept.
            _ = try await response.body.collect(upTo: 1 << 20)
            guard (200..<300).contains(response.status.code) else { return "the collector answered \(response.status.code)" }
            return nil
        } catch {
            return "the collector could not be reached (\(error))"
        }
    }

    private func lose(_ count: Int, because reason: String) {
        let total = lost.withLock {
            $0 += count
            return $0
        }
        guard warnings.admit() != nil else { return }
        lost.withLock { $0 -= total }
        logger.warning(
            "tracing: spans lost",
            metadata: [
                "spans": .stringConvertible(total), "reason": .string(reason),
                "endpoint": .string(GatewayConfiguration.maskedForLogs(settings.endpoint)),
            ])
    }
}
