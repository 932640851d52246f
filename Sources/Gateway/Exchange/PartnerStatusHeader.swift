import Foundation
import PartnerStatus
import SAMLVerification

/// Validates `AP-Partner-Framework-Status` on the v2 exchange and refuses, with samlgate's reason,
/// what the backend refuses; the client gets the backend's code for each (see
/// ``GatewayError/backendCode(api:exchange:)``):
///
/// | state | reason | backend code |
/// |---|---|---|
/// | absent, unreadable, other `accessStatus` | `missing_parameter`, `invalid_parameter_value` | `invalid_header_pfs_permission_access_not_present` |
/// | `denied`, `restricted` | `partner_access_not_granted` | `invalid_header_pfs_permission_access_not_granted` |
/// | `notDetermined` (`pending`) | `partner_access_undetermined` | `invalid_header_pfs_permission_access_not_determined` |
/// | `frameworkPermissionInfo.error` | `partner_framework_error` | `invalid_header_pfs_permission_access_not_determined` |
/// | `frameworkProviderInfo.error` | `partner_provider_error` | `invalid_header_pfs_provider_id_not_determined` |
/// | no provider or provider id | `partner_provider_undetermined` | `invalid_header_pfs_provider_id_not_determined` |
/// | provider id not in the trust store | `unknown_mvpd` | `invalid_header_pfs_provider_id_not_determined` |
/// | `expirationDate` passed | `partner_provider_expired` | `invalid_header_pfs_provider_info_expired` |
@_spi(Benchmarks) public enum PartnerStatusHeader {
    public static let name = PartnerFrameworkStatus.headerName

    /// Reads the header value, or throws `invalid_parameter_value`.
    public static func decode(_ value: String) throws(GatewayError) -> PartnerFrameworkStatus {
        do {
            return try PartnerFrameworkStatus.decode(header: value)
        } catch {
            throw GatewayError.invalidParameter(name, error.reason, header: true)
        }
    }

    /// Returns the MVPD a status's verdict names, or throws the answer.
    public static func mvpd(for verdict: PartnerStatusVerdict, trustStore: TrustStore) throws(GatewayError) -> String {
        let id = try grantedProvider(verdict)
        guard let mvpd = trustStore.mvpd(forPlatformMappingID: id) else {
            throw GatewayError(
                status: 400, code: .unknownMVPD,
                message: "no trust configuration for the provider the partner status names",
                details: [("header", .string(name))])
        }
        return mvpd
    }

    /// The `verdict` label of `samlgate_partner_status_total`.
    public static func label(_ verdict: PartnerStatusVerdict) -> String {
        switch verdict {
        case .granted: return "granted"
        case .denied: return "denied"
        case .restricted: return "restricted"
        case .undetermined: return "undetermined"
        case .permissionError: return "permission_error"
        case .providerError: return "provider_error"
        case .providerUndetermined: return "provider_undetermined"
        case .expired: return "expired"
        case .unreadable: return "unreadable"
        }
    }

    /// The provider id when SSO may proceed, otherwise the refusal.
    public static func grantedProvider(_ verdict: PartnerStatusVerdict) throws(GatewayError) -> String {
        let header: [(String, GatewayError.Detail)] = [("header", .string(name))]
        switch verdict {
        case .granted(let id):
            return id
        case .permissionError(let code):
            throw GatewayError(
                status: 400, code: .partnerFrameworkError,
                message: "the partner framework reported an error while asking for the permission" + reported(code), details: header)
        case .denied:
            throw GatewayError(
                status: 400, code: .partnerAccessNotGranted, message: "the user denied access to the TV provider account", details: header)
        case .restricted:
            throw GatewayError(
                status: 400, code: .partnerAccessNotGranted, message: "the application is restricted from the TV provider account",
                details: header)
        case .undetermined:
            throw GatewayError(
                status: 400, code: .partnerAccessUndetermined, message: "the user has not decided on access to the TV provider account",
                details: header)
        case .providerError(let code):
            throw GatewayError(
                status: 400, code: .partnerProviderError,
                message: "the partner framework reported an error while asking for the provider" + reported(code), details: header)
        case .providerUndetermined(let why):
            throw GatewayError(status: 400, code: .partnerProviderUndetermined, message: why, details: header)
        case .expired:
            throw GatewayError(
                status: 400, code: .partnerProviderExpired, message: "the TV provider profile on the device has expired", details: header)
        case .unreadable(let why):
            throw GatewayError.invalidParameter(name, why, header: true)
        }
    }

    /// ` (code X)` for a framework error's code: the framework's own short code (letters, digits,
    /// `_.-`), never other client text.
    private static func reported(_ code: String?) -> String {
        guard let code, code.utf8.count <= 32,
            code.utf8.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            })
        else { return "" }
        return " (code \(code))"
    }
}
