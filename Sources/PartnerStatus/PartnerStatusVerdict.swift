/// What an `AP-Partner-Framework-Status` says about partner single sign-on (see
/// ``PartnerFrameworkStatus/verdict(now:)``). The gateway and the reference upstream map it to the
/// backend's `invalid_header_pfs_*` codes on the exchange; on the partner session the reference
/// upstream falls back to basic authentication instead.
public enum PartnerStatusVerdict: Sendable, Equatable {
    /// Access granted and a provider profile that has not expired: SSO may proceed.
    case granted(providerID: String)
    /// The user refused access to the TV provider account.
    case denied
    /// The app is not allowed to access the TV provider account (parental or device management
    /// restrictions).
    case restricted
    /// `notDetermined` (or the older `pending`): the user has not decided.
    case undetermined(String)
    /// `frameworkPermissionInfo.error`: the framework failed while asking for the permission.
    case permissionError(code: String?)
    /// `frameworkProviderInfo.error`: the framework failed while asking for the provider.
    case providerError(code: String?)
    /// Access granted, but no provider named (no `frameworkProviderInfo`, or no `id` in it).
    case providerUndetermined(String)
    /// The provider profile on the device has expired.
    case expired(providerID: String)
    /// Well-formed JSON that does not say enough (an `accessStatus` the documentation does not
    /// list).
    case unreadable(String)
}
