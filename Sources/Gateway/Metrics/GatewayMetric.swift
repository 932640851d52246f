import Prometheus

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
    case droppedHeaderNames = "samlgate_dropped_header_names_total"
    case throttleStoreUnavailable = "samlgate_throttle_store_unavailable_total"
    case throttled = "samlgate_throttled_total"
    case connectionsRefused = "samlgate_connections_refused_total"
    case openConnections = "samlgate_open_connections"
    case auditLines = "samlgate_audit_lines_total"
    case auditErrors = "samlgate_audit_errors_total"
    case partnerStatus = "samlgate_partner_status_total"

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
