// The metrics' vocabulary: every name with its help text, the label values known before anything
// happens, and the handles kept by label values.

import PartnerStatus
import Prometheus
import RESP
import SAMLEncoding
import Synchronization

/// Every metric of `/metrics`: its name and its `# HELP` text, in the words of the metrics table
/// of docs/gateway.md. The one place both live, so that no metric is made without its help text:
/// the registry refuses two help texts for one name, and a name not listed here cannot be made.
enum GatewayMetric: String, CaseIterable, Sendable {
    case requests = "samlgate_requests_total"
    case errors = "samlgate_errors_total"
    case exchanges = "samlgate_exchanges_total"
    case verificationFailures = "samlgate_verification_failures_total"
    case reportOnly = "samlgate_report_only_total"
    case samlForms = "samlgate_saml_forms_total"
    case equivalentNormalizedForwards = "samlgate_equivalent_normalized_forwards_total"
    case signaturePreservingForwards = "samlgate_signature_preserving_forwards_total"
    case stageDuration = "samlgate_stage_duration_seconds"
    case upstreamDuration = "samlgate_upstream_duration_seconds"
    case upstreamErrors = "samlgate_upstream_errors_total"
    case workerQueueDepth = "samlgate_worker_queue_depth"
    case workerQueueLimit = "samlgate_worker_queue_limit"
    case workers = "samlgate_workers"
    case upstreamsConfigured = "samlgate_upstreams_configured"
    case upstreamsHealthy = "samlgate_upstreams_healthy"
    case trustStoreMVPDs = "samlgate_trust_store_mvpds"
    case trustStoreReloads = "samlgate_trust_store_reloads_total"
    case verificationsByKey = "samlgate_verifications_by_key_total"
    case trustCertificateExpiry = "samlgate_trust_certificate_expiry_seconds"
    case trustMetadataExpiry = "samlgate_trust_metadata_expiry_seconds"
    case trustCertificateExpiryUnreadable = "samlgate_trust_certificate_expiry_unreadable"
    case metadataRefetch = "samlgate_metadata_refetch_total"
    case metadataRefresh = "samlgate_metadata_refresh_total"
    case metadataRefreshFailures = "samlgate_metadata_refresh_failures_total"
    case metadataLastRefresh = "samlgate_metadata_last_refresh_timestamp_seconds"
    case replayStoreUp = "samlgate_replay_store_up"
    case replayStoreDuration = "samlgate_replay_store_duration_seconds"
    case replayStoreErrors = "samlgate_replay_store_errors_total"
    case replayStoreUnrecorded = "samlgate_replay_store_unrecorded_total"
    case replayStoreFailovers = "samlgate_replay_store_failovers_total"
    case replayStoreRedirects = "samlgate_replay_store_redirects_total"
    case replayStoreTopologyRefreshes = "samlgate_replay_store_topology_refreshes_total"
    case droppedHeaderNames = "samlgate_dropped_header_names_total"
    case throttleStoreUnavailable = "samlgate_throttle_store_unavailable_total"
    case throttled = "samlgate_throttled_total"
    case connectionsRefused = "samlgate_connections_refused_total"
    case openConnections = "samlgate_open_connections"
    case auditLines = "samlgate_audit_lines_total"
    case auditErrors = "samlgate_audit_errors_total"
    case partnerStatus = "samlgate_partner_status_total"
    case clientConnections = "samlgate_client_connections_total"
    case tlsHandshakes = "samlgate_tls_handshakes_total"
    case tlsHandshakeFailures = "samlgate_tls_handshake_failures_total"
    case tlsCertificateNotAfter = "samlgate_tls_certificate_not_after_timestamp_seconds"
    case tlsReloads = "samlgate_tls_reloads_total"
    case upstreamTLSReloads = "samlgate_upstream_tls_reloads_total"
    case http2ConnectionErrors = "samlgate_http2_connection_errors_total"
    case http2StreamErrors = "samlgate_http2_stream_errors_total"
    case stateErrors = "samlgate_state_errors_total"

    /// The `# HELP` text.
    var help: String {
        switch self {
        case .requests: "Every request by route and status"
        case .errors: "Every error the gateway answered, by samlgate's reason"
        case .exchanges:
            "Every exchange whose SAML work ran, by MVPD and outcome (forwarded, refused); mvpd is one of the trust store's, or unknown"
        case .verificationFailures:
            "The verifier's refusals, by reason and MVPD (as in exchanges_total); in report-only mode too, though the response is forwarded"
        case .reportOnly:
            "Exchanges forwarded in report-only mode that enforcing would have refused, by MVPD (as in exchanges_total) and samlgate's reason"
        case .samlForms: "The form SAMLResponse arrived in (raw, base64, encoded)"
        case .equivalentNormalizedForwards:
            "Exchanges forwarded after normalization broke the signature: the normalized document, the same tree"
        case .signaturePreservingForwards: "Exchanges forwarded after normalization broke the signature: the original"
        case .stageDuration: "Seconds of each stage: parse, verify, encode, queue (waiting for a worker), total"
        case .upstreamDuration: "Upstream latency, seconds, by upstream"
        case .upstreamErrors: "Upstream failures by upstream and kind: connect, timeout, broken, invalid_response"
        case .workerQueueDepth: "Requests waiting for a worker"
        case .workerQueueLimit: "How many requests may wait for a worker before exchanges are refused overloaded"
        case .workers: "The worker threads"
        case .upstreamsConfigured: "The upstreams"
        case .upstreamsHealthy: "The upstreams not cooling down after a connect failure (/readyz needs one)"
        case .trustStoreMVPDs: "The MVPDs of the trust store"
        case .trustStoreReloads: "Reloads of the trust store by result (ok, failed)"
        case .verificationsByKey:
            "Accepted responses by the trusted key that verified them (key: the first 8 hex digits of its SHA-256 fingerprint)"
        case .trustCertificateExpiry: "Seconds until each trusted certificate's notAfter (negative once passed); replaced at every load"
        case .trustMetadataExpiry: "Seconds until each MVPD's metadata validUntil (negative once passed); replaced at every load"
        case .trustCertificateExpiryUnreadable:
            "1 for each trusted certificate whose notAfter cannot be read (it has no expiry gauge); replaced at every load"
        case .metadataRefetch:
            "Fetched metadata fetched out of turn after a response was refused key_not_trusted (updated, unchanged, failed, suppressed)"
        case .metadataRefresh: "Fetches of fetched metadata by source (MVPD id or aggregate) and result (updated, not_modified, failed)"
        case .metadataRefreshFailures: "Failed fetches of fetched metadata by source and reason"
        case .metadataLastRefresh: "Unix time of the last fetch of fetched metadata that succeeded, by source"
        case .replayStoreUp: "With a shared replay store: 1 while its last command got a usable reply, else 0"
        case .replayStoreDuration: "With a shared replay store: one SET NX round trip, seconds"
        case .replayStoreErrors: "With a shared replay store: failures by kind"
        case .replayStoreUnrecorded: "With a shared replay store: exchanges accepted unrecorded under replay-store-failure: open"
        case .replayStoreFailovers: "With a replay store behind Sentinel: failovers followed (a new primary named)"
        case .replayStoreRedirects: "With a replay store on a Redis Cluster: redirects followed by kind (moved, ask)"
        case .replayStoreTopologyRefreshes: "With a replay store on a Redis Cluster: slot maps asked and answered"
        case .droppedHeaderNames:
            "Request headers not forwarded because their names hold _ or another character than letters, digits and -"
        case .throttleStoreUnavailable:
            "With throttle-store: shared: exchanges let through unthrottled because Redis could not answer, by kind (refused: the script)"
        case .throttled: "Requests refused 429 throttled by route"
        case .connectionsRefused: "Client connections closed at accept by a cap: total (max-connections), per_client (max-connections-per-client)"
        case .openConnections: "Client connections open now"
        case .auditLines: "With audit-log: audit lines written"
        case .auditErrors: "With audit-log: writes (or a reopen, a sync) that failed"
        case .partnerStatus: "Every AP-Partner-Framework-Status seen on a v2 route, by route and verdict"
        case .clientConnections: "Client connections by the protocol they speak once set up: http1.1, h2 (over TLS), h2c"
        case .tlsHandshakes: "With TLS: handshakes completed, by TLS version and protocol chosen by ALPN"
        case .tlsHandshakeFailures: "With TLS: handshakes that failed, by reason"
        case .tlsCertificateNotAfter: "With TLS: Unix time of the served certificate's notAfter"
        case .tlsReloads: "With TLS: reloads of the certificate, key and client CA by result (ok, failed, unchanged files are not counted)"
        case .upstreamTLSReloads:
            "With upstream-ca or upstream-tls-certificate: reloads of those files by result (ok, failed, unchanged files are not counted)"
        case .http2ConnectionErrors: "HTTP/2 connections closed for a protocol error or a flood, by reason"
        case .http2StreamErrors: "HTTP/2 streams reset alone, their connection serving on: malformed requests, streams opened after GOAWAY"
        case .stateErrors:
            "Events a request's state machine did not allow (a bug of the gateway's): the connection closed or the exchange refused, by machine"
        }
    }

    /// The name with its help text, as the registry takes them.
    var descriptor: MetricNameDescriptor {
        MetricNameDescriptor(metricName: rawValue, unitName: "", helpText: help)
    }

    /// The buckets of every duration histogram: from 0.05 ms (a small verification) to 10 s (an upstream's timeout).
    static let durationBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]
}

extension PrometheusCollectorRegistry {
    /// The counter of `metric` with `labels` (in the order given: each metric names its labels
    /// in one order), made at the first call, the same one at every later call.
    func counter(_ metric: GatewayMetric, _ labels: [(String, String)] = []) -> Prometheus.Counter {
        makeCounter(descriptor: metric.descriptor, labels: labels)
    }

    func gauge(_ metric: GatewayMetric, _ labels: [(String, String)] = []) -> Prometheus.Gauge {
        makeGauge(descriptor: metric.descriptor, labels: labels)
    }

    func durations(_ metric: GatewayMetric, _ labels: [(String, String)] = []) -> DurationHistogram {
        makeDurationHistogram(descriptor: metric.descriptor, labels: labels, buckets: GatewayMetric.durationBuckets)
    }
}

// MARK: - Label values known in advance

/// The label values known before anything happens, whose series ``GatewayMetrics`` makes at
/// start-up at 0: a series that appears at its first event, already counted, is invisible to
/// `rate()` and `increase()` (Prometheus has no earlier sample to subtract), so a one-off burst
/// would never show on a panel nor fire an alert.
///
/// Taken from the enumerations where there is one. The error codes are spelled out because
/// ``ErrorCode`` is a struct of named constants with no list of them; the documentation check
/// counts a code named anywhere in the sources as raised, so naming them here would hide a code
/// nothing raises. MetricSeriesTests holds these lists to the declarations in the sources.
enum KnownLabelValues {
    /// The verifier's codes (SAMLVerification's `Errors/VerificationError.swift`): the `code` of
    /// `verification_failures_total`, and reasons of `errors_total` and `report_only_total`.
    static let verificationCodes = [
        "signature_missing", "signature_invalid", "key_not_trusted", "reference_mismatch", "algorithm_not_allowed", "duplicate_id",
        "assertion_count", "status_not_success", "issuer_mismatch", "wrong_audience", "not_yet_valid", "expired", "replayed",
        "unbounded_validity", "validity_too_long", "in_response_to_mismatch", "destination_mismatch", "normalization_changes_document",
        "unsigned_content", "forbidden_dtd", "forbidden_markup", "too_large", "too_deep", "too_many_attributes", "too_many_namespaces",
        "too_many_nodes", "malformed_xml", "unsupported_encrypted_assertion", "unknown_mvpd", "replay_cache_full", "metadata_expired",
        "metadata_unavailable", "internal_error",
    ]

    /// The encoder's codes (SAMLEncoding's `Errors/ErrorCode.swift`).
    static let encodingCodes = ["invalid_utf8", "malformed_percent_encoding", "malformed_base64", "unrecognized_saml_form", "double_encoded"]

    /// The gateway's own codes (`ErrorCode+Gateway.swift`).
    static let gatewayCodes = [
        "missing_parameter", "invalid_parameter_value", "method_not_allowed", "malformed_request", "body_too_large", "overloaded", "throttled",
        "replay_store_unavailable", "upstream_unavailable", "upstream_timeout", "upstream_response_invalid", "client_timeout",
        "unsupported_media_type", "duplicate_header", "duplicate_parameter", "invalid_request", "invalid_request_target", "header_timeout",
        "tls_required", "invalid_partner", "partner_access_not_granted", "partner_access_undetermined", "partner_framework_error",
        "partner_provider_error",
        "partner_provider_undetermined", "partner_provider_expired",
    ]

    /// Every reason a client can be refused with: the `code` of `errors_total`, the `reason` of
    /// `report_only_total`. The trust store's own codes never answer a request.
    static let refusalCodes = verificationCodes + encodingCodes + gatewayCodes

    /// The routes a throttle counts (`throttled_total`): the exchanges (`throttle-exchanges`) and
    /// every route forwarded as it comes (`throttle-pass-through`).
    static let throttledRoutes: [String] =
        ([GatewayRoute.exchangeV1, .exchangeV2, .tokenCheck, .proxy] + partnerStatusRoutes.map(GatewayRoute.partnerStatus)).map(\.label)

    /// The routes whose `AP-Partner-Framework-Status` is counted (`partner_status_total`): the v2
    /// exchange and the routes that only forward it.
    static let partnerStatusRouteLabels: [String] = ([GatewayRoute.exchangeV2] + partnerStatusRoutes.map(GatewayRoute.partnerStatus)).map(\.label)

    private static let partnerStatusRoutes: [PartnerStatusRoute] = [.sessionsSSO, .profiles, .decisions, .logout]

    /// Each verdict's label, as ``PartnerStatusHeader/label(_:)`` names it, and `absent` (no header).
    static let partnerStatusVerdicts: [String] = {
        let verdicts: [PartnerStatusVerdict] = [
            .granted(providerID: ""), .denied, .restricted, .undetermined(""), .permissionError(code: nil), .providerError(code: nil),
            .providerUndetermined(""), .expired(providerID: ""), .unreadable(""),
        ]
        return verdicts.map(PartnerStatusHeader.label) + ["absent"]
    }()

    /// `stage_duration_seconds{stage}`: the exchange's three, its wait for a worker, and every request's whole.
    static let stages = ["parse", "verify", "encode", "queue", "total"]

    /// `trust_store_reloads_total{result}`.
    static let reloadResults = ["ok", "failed"]

    /// `upstream_errors_total{kind}`: the failures counted against an upstream (a client's own
    /// timeout is not one of them).
    static let upstreamErrorKinds = [UpstreamFailure.Kind.connect, .timeout, .broken, .invalidResponse].map(\.rawValue)

    /// `replay_store_errors_total{kind}`.
    static let replayStoreErrorKinds = RESPError.Kind.allCases.map(\.rawValue)

    /// `replay_store_redirects_total{kind}`.
    static let replayStoreRedirectKinds = ["moved", "ask"]

    /// `requests_total{route, status}` for the answers the gateway gives itself, known per route
    /// before any request: a refusal's first `rate()` is not lost to a series that did not exist
    /// yet (the first 429s, 502s or 503s after a start). The statuses of forwarded answers are the
    /// backend's, made as they come.
    static let gatewayAnsweredRequests: [(route: String, status: Int)] = {
        let forwarding = [GatewayRoute.exchangeV1, .exchangeV2, .tokenCheck, .proxy] + partnerStatusRoutes.map(GatewayRoute.partnerStatus)
        var pairs = forwarding.flatMap { route in [400, 403, 408, 413, 429, 502, 503, 504].map { (route.label, $0) } }
        pairs += [
            (GatewayRoute.healthz.label, 200), (GatewayRoute.readyz.label, 200), (GatewayRoute.readyz.label, 503),
            (GatewayRoute.metrics.label, 200), (GatewayRoute.exchangeMethodNotAllowed(allow: "").label, 405),
            (GatewayRoute.invalidTarget.label, 400), (GatewayRoute.unroutedLabel, 400), (GatewayRoute.unroutedLabel, 431),
            (GatewayRoute.headerTimeoutLabel, 408),
        ]
        return pairs
    }()

    /// `connections_refused_total{reason}`.
    static let connectionRefusals = ConnectionCaps.Refusal.allCases.map(\.rawValue)

    /// `client_connections_total{protocol}`.
    static let connectionProtocols = ["http1.1", "h2", "h2c"]

    /// `tls_handshake_failures_total{reason}`.
    static let handshakeFailures = TLSHandshakeFailure.allCases.map(\.rawValue)

    /// `http2_connection_errors_total{reason}`.
    static let http2ConnectionErrors = HTTP2ConnectionError.allCases.map(\.rawValue)

    /// `http2_stream_errors_total{reason}`.
    static let http2StreamErrors = HTTP2StreamError.allCases.map(\.rawValue)

    /// `metadata_refresh_total{result}`: a new copy, none (`304` or the same bytes), a failure.
    static let metadataRefreshResults = ["updated", "not_modified", "failed"]

    /// `metadata_refresh_failures_total{reason}`.
    static let metadataFailureReasons = MetadataFetchFailure.Reason.allCases.map(\.rawValue)

    /// `metadata_refetch_total{result}`: a fetch's result, or `suppressed` within `metadata-min-refetch`.
    static let metadataRefetchResults = MetadataRefreshResult.allCases.map(\.rawValue) + ["suppressed"]
}

// MARK: - Handles by label values

/// Metric handles by their label values, made once. Making a handle asks the Prometheus registry
/// (the labels validated and looked up under its lock); the gateway records about eight metrics
/// per exchange, so it keeps the handles instead.
final class MetricHandles<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex<[Key: Handle]>([:])
    private let make: @Sendable (Key) -> Handle

    init(_ make: @escaping @Sendable (Key) -> Handle) {
        self.make = make
    }

    /// Makes the handles of `keys` now, so that their series exist (at 0) before the first event.
    func prepare(_ keys: some Sequence<Key>) {
        for key in keys { _ = self[key] }
    }

    subscript(key: Key) -> Handle {
        if let handle = handles.withLock({ $0[key] }) { return handle }
        let handle = make(key)
        return handles.withLock { handles in
            if let existing = handles[key] { return existing }
            handles[key] = handle
            return handle
        }
    }
}
