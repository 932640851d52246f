import PartnerStatus
import RESP
import SAMLEncoding

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
    /// The verifier's codes (SAMLVerification's `ErrorCode+Verification.swift`): the `code` of
    /// `verification_failures_total`, and reasons of `errors_total` and `report_only_total`.
    static let verificationCodes = [
        "signature_missing", "signature_invalid", "key_not_trusted", "reference_mismatch", "algorithm_not_allowed", "duplicate_id",
        "assertion_count", "status_not_success", "issuer_mismatch", "wrong_audience", "not_yet_valid", "expired", "replayed",
        "unbounded_validity", "validity_too_long", "in_response_to_mismatch", "destination_mismatch", "normalization_changes_document",
        "unsigned_content", "forbidden_dtd", "forbidden_markup", "too_large", "too_deep", "too_many_attributes", "too_many_namespaces",
        "too_many_nodes", "malformed_xml", "unsupported_encrypted_assertion", "unknown_mvpd", "replay_cache_full", "metadata_expired",
        "metadata_unavailable", "internal_error",
    ]

    /// The encoder's codes (SAMLEncoding's `ErrorCode+Encoding.swift`).
    static let encodingCodes = ["invalid_utf8", "malformed_percent_encoding", "malformed_base64", "unrecognized_saml_form", "double_encoded"]

    /// The gateway's own codes (`ErrorCode+Gateway.swift`).
    static let gatewayCodes = [
        "missing_parameter", "invalid_parameter_value", "method_not_allowed", "malformed_request", "body_too_large", "overloaded", "throttled",
        "replay_store_unavailable", "upstream_unavailable", "upstream_timeout", "upstream_response_invalid", "client_timeout",
        "unsupported_media_type", "duplicate_header", "duplicate_parameter", "invalid_request", "invalid_request_target", "header_timeout",
        "invalid_partner", "partner_access_not_granted", "partner_access_undetermined", "partner_framework_error", "partner_provider_error",
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

    /// `connections_refused_total{reason}`.
    static let connectionRefusals = ConnectionCaps.Refusal.allCases.map(\.rawValue)

    /// `metadata_refresh_total{result}`: a new copy, none (`304` or the same bytes), a failure.
    static let metadataRefreshResults = ["updated", "not_modified", "failed"]

    /// `metadata_refresh_failures_total{reason}`.
    static let metadataFailureReasons = MetadataFetchFailure.Reason.allCases.map(\.rawValue)

    /// `metadata_refetch_total{result}`: a fetch's result, or `suppressed` within `metadata-min-refetch`.
    static let metadataRefetchResults = MetadataRefreshResult.allCases.map(\.rawValue) + ["suppressed"]
}
