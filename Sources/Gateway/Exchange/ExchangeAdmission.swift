import Foundation
import NIOHTTP1
import SAMLVerification
import ServerSupport

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
        let statusHeader = headers.first(name: "ap-partner-framework-status") ?? ""
        if statusHeader.isEmpty {
            metrics.partnerStatus(route: GatewayRoute.exchangeV2.label, verdict: "absent")
        }
        for name in partnerHeaders where (headers.first(name: name) ?? "").isEmpty {
            throw GatewayError.missingParameter(name)
        }
        let status: PartnerFrameworkStatus
        do throws(GatewayError) {
            status = try PartnerStatusHeader.decode(statusHeader)
        } catch {
            metrics.partnerStatus(route: GatewayRoute.exchangeV2.label, verdict: "unreadable")
            throw error
        }
        let verdict = status.verdict(now: Date())
        metrics.partnerStatus(route: GatewayRoute.exchangeV2.label, verdict: PartnerStatusHeader.label(verdict))
        return .v2(mvpd: try PartnerStatusHeader.mvpd(for: verdict, trustStore: store))
    }

    /// Counts the partner status of a forwarded v2 route (see ``PartnerStatusRoute``).
    static func countPartnerStatus(_ headers: HTTPHeaders, route: PartnerStatusRoute, metrics: GatewayMetrics) {
        guard let value = headers.first(name: "ap-partner-framework-status"), !value.isEmpty else {
            metrics.partnerStatus(route: route.label, verdict: "absent")
            return
        }
        let verdict = (try? PartnerFrameworkStatus.decode(header: value)).map { PartnerStatusHeader.label($0.verdict(now: Date())) }
        metrics.partnerStatus(route: route.label, verdict: verdict ?? "unreadable")
    }
}
