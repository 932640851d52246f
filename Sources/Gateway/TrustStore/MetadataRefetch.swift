import Foundation
import NIOConcurrencyHelpers
import SAMLVerification

/// Metadata fetched out of turn, so that an IdP's unannounced key rotation costs no outage:
/// when a response from an MVPD whose metadata is fetched is refused only because its signing
/// key is not trusted, its source is fetched at once instead of at the next scheduled refresh,
/// and the response verified once more if the copy changed (``ExchangeFlow``).
///
/// Bounded, because a forged response asks for it too: one fetch in flight per source (later
/// askers wait for it), and none started within `metadata-min-refetch` seconds of the last one
/// (askers then get "unchanged" at once). Counted in
/// `samlgate_metadata_refetch_total{source,result}`: `updated`, `unchanged`, `failed`, and
/// `suppressed` (within the interval).
package final class MetadataRefetch: Sendable {
    /// Fetches one source as the scheduled refresh does: set by ``MetadataRefreshService`` while
    /// it runs (it owns the HTTP client).
    typealias Runner = @Sendable (MetadataSource) async -> MetadataRefreshResult
    typealias Completion = @Sendable (MetadataRefreshResult) -> Void

    private let minimumInterval: TimeInterval
    private let metrics: GatewayMetrics
    private let state = NIOLockedValueBox(State())

    struct State {
        var runner: Runner?
        /// By source key: the askers waiting for the fetch in flight.
        var inFlight: [String: [Completion]] = [:]
        /// By source key: when its last out-of-turn fetch started.
        var started: [String: Date] = [:]
    }

    init(minimumInterval: TimeInterval, metrics: GatewayMetrics) {
        self.minimumInterval = minimumInterval
        self.metrics = metrics
    }

    /// Installs (or with `nil` removes) what fetches a source.
    func attach(_ runner: Runner?) {
        state.withLockedValue { $0.runner = runner }
    }

    /// Asks for `source` to be fetched now; `completion` gets the result, on any thread:
    /// `unchanged` at once when a fetch of it started less than `metadata-min-refetch` ago or
    /// no refresher runs.
    func request(_ source: MetadataSource, now: Date = Date(), completion: @escaping Completion) {
        let key = source.name + " " + source.url.absoluteString
        enum Decision {
            case joined, suppressed
            case start(Runner)
        }
        let decision = state.withLockedValue { state -> Decision in
            if state.inFlight[key] != nil {
                state.inFlight[key]?.append(completion)
                return .joined
            }
            guard let runner = state.runner else { return .suppressed }
            if let last = state.started[key], now.timeIntervalSince(last) < minimumInterval { return .suppressed }
            state.started[key] = now
            state.inFlight[key] = [completion]
            return .start(runner)
        }
        switch decision {
        case .joined:
            return
        case .suppressed:
            metrics.metadataRefetch(source: source.name, result: "suppressed")
            completion(.unchanged)
        case .start(let runner):
            Task {
                let result = await runner(source)
                metrics.metadataRefetch(source: source.name, result: result.rawValue)
                let waiting = state.withLockedValue { $0.inFlight.removeValue(forKey: key) } ?? []
                for waiter in waiting { waiter(result) }
            }
        }
    }
}
