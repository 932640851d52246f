import Foundation
import PartnerStatus
import SAMLVerification

/// Validates `AP-Partner-Framework-Status` and answers with the Adobe Pass SDK's codes when the
/// framework state does not allow single sign-on:
///
/// | state | status | code |
/// |---|---|---|
/// | `accessStatus` `denied` | 403 | `VSA403` |
/// | `accessStatus` `notDetermined` / `pending` | 403 | `VSA404` |
/// | `frameworkPermissionInfo.error` present | 400 | `VSA503` |
/// | `frameworkProviderInfo.error` present | 400 | `APPL_ERROR` |
/// | provider `expirationDate` passed | 401 | `APPL_ERROR` |
/// | provider id not in the trust store | 400 | `unknown_mvpd` |
/// | not base64 / not the JSON object / unknown status | 400 | `invalid_parameter_value` |
@_spi(Benchmarks) public enum PartnerStatusHeader {
    public static let name = PartnerFrameworkStatus.headerName

    /// Reads the header value, or throws `invalid_parameter_value`.
    public static func decode(_ value: String) throws(GatewayError) -> PartnerFrameworkStatus {
        do {
            return try PartnerFrameworkStatus.decode(header: value)
        } catch {
            throw GatewayError.invalidParameter(name, error.reason)
        }
    }

    /// Returns the MVPD a status's verdict names, or throws the answer.
    public static func mvpd(for verdict: PartnerStatusVerdict, trustStore: TrustStore) throws(GatewayError) -> String {
        let id = try grantedProvider(verdict)
        guard let mvpd = trustStore.mvpd(forPlatformMappingID: id) else {
            throw GatewayError(
                status: 400, code: .init(VerificationError.Code.unknownMVPD),
                message: "no trust configuration for the provider the partner status names",
                details: [("parameter", .string(name))])
        }
        return mvpd
    }

    /// The `verdict` label of `samlgate_partner_status_total`.
    public static func label(_ verdict: PartnerStatusVerdict) -> String {
        switch verdict {
        case .granted: return "granted"
        case .denied: return "denied"
        case .undetermined: return "undetermined"
        case .permissionError: return "permission_error"
        case .providerError: return "provider_error"
        case .expired: return "expired"
        case .unreadable: return "unreadable"
        }
    }

    /// The provider id when SSO may proceed, otherwise the SDK-compatible error.
    public static func grantedProvider(_ verdict: PartnerStatusVerdict) throws(GatewayError) -> String {
        switch verdict {
        case .granted(let id):
            return id
        case .permissionError(let code):
            throw GatewayError(
                status: 400, code: .partnerFrameworkError,
                message: "the VSA framework reported an error" + (code.map { " (code \($0))" } ?? ""),
                action: .none)
        case .denied:
            throw GatewayError(
                status: 403, code: .partnerAccessDenied, message: "the user did not grant access to the TV provider account",
                action: .authentication)
        case .undetermined(let status):
            throw GatewayError(
                status: 403, code: .partnerAccessUndetermined, message: "access to the TV provider account is \(status)",
                action: .authentication)
        case .providerError(let code):
            throw GatewayError(
                status: 400, code: .partnerProviderError,
                message: "the VSA framework reported a provider error" + (code.map { " (code \($0))" } ?? ""))
        case .expired:
            throw GatewayError(
                status: 401, code: .partnerProviderError, message: "the TV provider profile on the device has expired",
                action: .authentication)
        case .unreadable(let why):
            throw GatewayError.invalidParameter(name, why)
        }
    }
}
