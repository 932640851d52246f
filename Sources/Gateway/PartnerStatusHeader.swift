import Foundation
import SAMLVerification

/// Validates `AP-Partner-Framework-Status` for the partner SSO routes and answers with the
/// Adobe Pass SDK's codes when the framework state does not allow single sign-on:
///
/// | state | status | code |
/// |---|---|---|
/// | `accessStatus` `denied` | 403 | `VSA403` |
/// | `accessStatus` `notDetermined` / `pending` | 403 | `VSA404` |
/// | `frameworkPermissionInfo.error` present | 400 | `VSA503` |
/// | `frameworkProviderInfo.error` present | 400 | `APPL_ERROR` |
/// | provider `expirationDate` passed | 401 | `APPL_ERROR` |
/// | provider id not in the trust store | 400 | `unknown_mvpd` |
public enum PartnerStatusHeader {
    public static let name = "AP-Partner-Framework-Status"

    /// Returns the MVPD the status names, or throws the answer.
    public static func mvpd(for status: PartnerFrameworkStatus, trustStore: TrustStore, now: Date) throws(GatewayError) -> String {
        let permission = status.frameworkPermissionInfo
        if let error = permission.error {
            throw GatewayError(status: 400, code: "VSA503",
                               message: "the VSA framework reported an error" + (error.code.map { " (code \($0))" } ?? ""),
                               action: .none)
        }
        switch permission.accessStatus {
        case "granted": break
        case "denied":
            throw GatewayError(status: 403, code: "VSA403", message: "the user did not grant access to the TV provider account",
                               action: .authentication)
        case "notDetermined", "pending":
            throw GatewayError(status: 403, code: "VSA404", message: "access to the TV provider account is \(permission.accessStatus)",
                               action: .authentication)
        default:
            throw GatewayError.invalidParameter(name, "unknown accessStatus")
        }
        guard let provider = status.frameworkProviderInfo else {
            throw GatewayError.invalidParameter(name, "frameworkProviderInfo is missing")
        }
        if let error = provider.error {
            throw GatewayError(status: 400, code: "APPL_ERROR",
                               message: "the VSA framework reported a provider error" + (error.code.map { " (code \($0))" } ?? ""))
        }
        guard let id = provider.id, !id.isEmpty else {
            throw GatewayError.invalidParameter(name, "frameworkProviderInfo.id is missing")
        }
        if let expiration = provider.expirationDate, expiration / 1000 < now.timeIntervalSince1970 {
            throw GatewayError(status: 401, code: "APPL_ERROR", message: "the TV provider profile on the device has expired",
                               action: .authentication)
        }
        guard let mvpd = trustStore.mvpd(forPlatformMappingID: id) else {
            throw GatewayError(status: 400, code: "unknown_mvpd", message: "no trust configuration for the provider the partner status names",
                               details: [("parameter", .string(name))])
        }
        return mvpd
    }
}
