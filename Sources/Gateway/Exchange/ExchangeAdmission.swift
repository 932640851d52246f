import Foundation
import NIOHTTP1
import PartnerStatus
import SAMLVerification

/// What a token-exchange request must look like before its body is read, and the v2 route's MVPD.
enum ExchangeAdmission {
    static let formType = "application/x-www-form-urlencoded"

    /// The headers that decide the v2 identity: each must be given exactly once.
    static let partnerHeaders = ["Authorization", "AP-Device-Identifier", "AP-Partner-Framework-Status"]

    /// No query (a backend reading parameters from the query before the body would use
    /// unverified values), exactly one form `Content-Type` and no `Content-Encoding` (the gateway
    /// parses the body as plain form data, so must the backend), and each header that decides the
    /// v2 identity once (a backend may read the other copy).
    static func check(_ headers: HTTPHeaders, target: RequestTarget, partner: Bool) throws(GatewayError) {
        if target.query != nil {
            throw GatewayError(
                status: 400, code: .invalidRequestTarget,
                message: "invalid request target: the token-exchange routes take no query string (parameters go in the body)")
        }
        let types = headers["content-type"]
        let mediaType = types.first?.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard types.count == 1, mediaType == formType, !headers.contains(name: "content-encoding") else {
            throw GatewayError(
                status: 415, code: .unsupportedMediaType,
                message: "the body must be application/x-www-form-urlencoded, given once, without Content-Encoding")
        }
        guard partner else { return }
        for name in partnerHeaders where headers[name].count > 1 {
            throw GatewayError(
                status: 400, code: .duplicateHeader, message: "the header \(name) is given more than once",
                details: [("header", .string(name))])
        }
    }

    /// The v2 route's MVPD, from the required headers and the partner framework status.
    static func partnerRoute(_ headers: HTTPHeaders, store: TrustStore, metrics: GatewayMetrics) throws(GatewayError) -> ExchangeRoute {
        if let missing = partnerHeaders.first(where: { (headers.first(name: $0) ?? "").isEmpty }) {
            // An absent status is counted; a status beside a missing header is refused for the
            // header, not read.
            if (headers.first(name: PartnerStatusHeader.name) ?? "").isEmpty {
                readPartnerStatus(headers, route: .exchangeV2, metrics: metrics)
            }
            throw GatewayError.missingParameter(missing)
        }
        let verdict = try readPartnerStatus(headers, route: .exchangeV2, metrics: metrics).get()
        return .v2(mvpd: try PartnerStatusHeader.mvpd(for: verdict, trustStore: store))
    }

    /// Built once: most forwarded v2 requests carry no status, and their reading must cost nothing.
    private static let absentStatus = GatewayError.missingParameter(PartnerStatusHeader.name)

    /// Reads `AP-Partner-Framework-Status` and counts its verdict for `route` in
    /// `samlgate_partner_status_total` — `absent`, `unreadable` or the verdict: the one place
    /// partner statuses are counted, for the exchange and the routes that only forward it. An
    /// absent header is `missing_parameter`, an unreadable one `invalid_parameter_value`.
    @discardableResult
    static func readPartnerStatus(
        _ headers: HTTPHeaders, route: GatewayRoute, metrics: GatewayMetrics
    )
        -> Result<PartnerStatusVerdict, GatewayError>
    {
        guard let value = headers.first(name: PartnerStatusHeader.name), !value.isEmpty else {
            metrics.partnerStatus(route: route.label, verdict: "absent")
            return .failure(absentStatus)
        }
        let reading = Result { () throws(GatewayError) in try PartnerStatusHeader.decode(value).verdict(now: Date()) }
        metrics.partnerStatus(route: route.label, verdict: (try? reading.get()).map(PartnerStatusHeader.label) ?? "unreadable")
        return reading
    }
}
