/// What an `AP-Partner-Framework-Status` says about partner single sign-on (see
/// ``PartnerFrameworkStatus/verdict(now:)``). Each party maps it its own way: the gateway to the
/// SDK's error codes, the reference upstream to a basic-authentication fallback.
public enum PartnerStatusVerdict: Sendable, Equatable {
    /// Access granted and a provider profile that has not expired: SSO may proceed.
    case granted(providerID: String)
    /// The user refused access to the TV provider account (SDK `VSA403`).
    case denied
    /// `notDetermined` or `pending` (SDK `VSA404`).
    case undetermined(String)
    /// `frameworkPermissionInfo.error` (SDK `VSA503`).
    case permissionError(code: String?)
    /// `frameworkProviderInfo.error` (SDK `APPL_ERROR`).
    case providerError(code: String?)
    /// The provider profile on the device has expired (SDK `APPL_ERROR`, 401).
    case expired(providerID: String)
    /// Well-formed JSON that does not say enough (unknown status, no provider id).
    case unreadable(String)
}
