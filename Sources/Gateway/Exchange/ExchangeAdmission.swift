import Foundation
import NIOHTTP1
import PartnerStatus
import SAMLVerification
import ServerSupport

/// What a token-exchange request must look like before its body is read, and the v2 route's MVPD.
enum ExchangeAdmission {
    static let formType: StaticString = "application/x-www-form-urlencoded"

    /// The headers that decide the v2 identity: each must be given exactly once.
    static let partnerHeaders = ["Authorization", DeviceIdentifierHeader.name, PartnerStatusHeader.name]

    /// The end-to-end headers of an exchange: what the gateway reads to admit it, and what the
    /// backend needs to accept it. None may be named in `Connection` (see ``connectionRefusal(_:needed:)``).
    static let exchangeHeaders = ["Host", "Content-Type", "Content-Length", "Content-Encoding", "X-Device-Info"]

    /// No header in `Connection` that the route needs end to end (checked first, before anything
    /// is verified or recorded), no query (a backend reading parameters from the query before
    /// the body would use unverified values), exactly one form `Content-Type` and no
    /// `Content-Encoding` (the gateway parses the body as plain form data, so must the backend),
    /// and each header that decides the v2 identity once (a backend may read the other copy).
    static func check(_ headers: HTTPHeaders, target: RequestTarget, partner: Bool) throws(GatewayError) {
        if let refusal = connectionRefusal(headers, needed: partner ? exchangeHeaders + partnerHeaders : exchangeHeaders) {
            throw refusal
        }
        if target.query != nil {
            throw GatewayError(
                status: 400, code: .invalidRequestTarget,
                message: "invalid request target: the token-exchange routes take no query string (parameters go in the body)")
        }
        let types = headers["content-type"]
        guard types.count == 1, HTTPFieldValue.equalsIgnoringCase(HTTPFieldValue.mediaType(types[0], listElement: false), formType),
            !headers.contains(name: "content-encoding")
        else {
            // 400, not 415: the backend documents 400 for a request it cannot read the
            // SAMLResponse from, and its clients know no other.
            throw GatewayError(
                status: 400, code: .unsupportedMediaType,
                message: "the body must be application/x-www-form-urlencoded, given once, without Content-Encoding")
        }
        guard partner else { return }
        for name in partnerHeaders where headers[name].count > 1 {
            throw GatewayError(
                status: 400, code: .duplicateHeader, message: "the header \(name) is given more than once",
                details: [("header", .string(name))])
        }
    }

    /// `400 invalid_request` when `Connection` names one of `needed`. A proxy strips the headers
    /// `Connection` names as hop-by-hop (RFC 9110 §7.6.1), so the backend would miss a header the
    /// gateway read: a v2 exchange would be verified and its assertion recorded against replay,
    /// then refused by the backend for the missing `Authorization` — the user's response spent.
    /// No client names an end-to-end header there (the RFC forbids it).
    static func connectionRefusal(_ headers: HTTPHeaders, needed: [String]) -> GatewayError? {
        let values = headers["connection"]
        guard !values.isEmpty else { return nil }
        let tokens = ProxyHeaders.connectionTokens(values)
        guard let named = needed.first(where: { tokens.contains(lowercased: $0.lowercased()) }) else { return nil }
        return GatewayError(
            status: 400, code: .invalidRequest,
            message: "Connection names \(named), which this route needs end to end (a proxy drops what Connection names)",
            details: [("header", .string(named))])
    }

    /// The v2 route's MVPD, from the required headers, the path's partner and the partner
    /// framework status — checked in the order the backend checks them (access token, device
    /// identifier, partner, status), so a request with two faults gets the backend's answer.
    static func partnerRoute(
        _ headers: HTTPHeaders, target: RequestTarget, store: TrustStore, observer: RequestObserver
    ) throws(GatewayError) -> ExchangeRoute {
        do throws(GatewayError) {
            try checkCaller(headers, target: target)
        } catch {
            // An absent status is counted; a status beside a caller fault is refused for that
            // fault, not read.
            if (headers.first(name: PartnerStatusHeader.name) ?? "").isEmpty {
                readPartnerStatus(headers, route: .exchangeV2, observer: observer)
            }
            throw error
        }
        let verdict = try readPartnerStatus(headers, route: .exchangeV2, observer: observer).get()
        return .v2(mvpd: try PartnerStatusHeader.mvpd(for: verdict, trustStore: store))
    }

    /// `Authorization: Bearer <token>`, a well-formed `AP-Device-Identifier`, and the partner
    /// `Apple` in the path (the only partner framework the backend knows): what the backend
    /// refuses before it reads the SAML response, refused here before it is verified and its
    /// assertion recorded.
    static func checkCaller(_ headers: HTTPHeaders, target: RequestTarget) throws(GatewayError) {
        let authorization = headers.first(name: "Authorization") ?? ""
        guard !authorization.isEmpty else { throw GatewayError.missingParameter("Authorization", header: true) }
        guard BearerCredentials.token(in: authorization) != nil else {
            throw GatewayError.invalidParameter("Authorization", "must be Bearer and an access token", header: true)
        }
        let device = headers.first(name: DeviceIdentifierHeader.name) ?? ""
        guard !device.isEmpty else { throw GatewayError.missingParameter(DeviceIdentifierHeader.name, header: true) }
        guard DeviceIdentifierHeader.isWellFormed(device) else {
            throw GatewayError.invalidParameter(
                DeviceIdentifierHeader.name, "must be fingerprint and the base64 of the device id", header: true)
        }
        let segments = GatewayRoute.segments(target.path)
        guard segments.count == 6, segments[5] == "apple" else {
            throw GatewayError(
                status: 400, code: .invalidPartner, message: "the partner in the path must be Apple",
                details: [("parameter", .string("partner"))])
        }
    }

    /// Built once: most forwarded v2 requests carry no status, and their reading must cost nothing.
    private static let absentStatus = GatewayError.missingParameter(PartnerStatusHeader.name, header: true)

    /// Reads `AP-Partner-Framework-Status` and counts its verdict for `route` in
    /// `samlgate_partner_status_total` — `absent`, `unreadable` or the verdict: the one place
    /// partner statuses are counted, for the exchange and the routes that only forward it. An
    /// absent header is `missing_parameter`, an unreadable one `invalid_parameter_value`.
    @discardableResult
    static func readPartnerStatus(
        _ headers: HTTPHeaders, route: GatewayRoute, observer: RequestObserver
    )
        -> Result<PartnerStatusVerdict, GatewayError>
    {
        guard let value = headers.first(name: PartnerStatusHeader.name), !value.isEmpty else {
            observer.partnerStatus(route: route, verdict: "absent")
            return .failure(absentStatus)
        }
        let reading = Result { () throws(GatewayError) in try PartnerStatusHeader.decode(value).verdict(now: Date()) }
        observer.partnerStatus(route: route, verdict: (try? reading.get()).map(PartnerStatusHeader.label) ?? "unreadable")
        return reading
    }
}
