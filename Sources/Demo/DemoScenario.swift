/// Which path through a cookbook the demo takes.
package enum DemoScenario: String, CaseIterable, Sendable {
    /// The user is signed in to a TV provider that supports partner SSO and grants access.
    case happy
    /// The user refused the app access to the TV provider account (`invalid_header_pfs_permission_access_not_granted`).
    case denied
    /// The user's TV provider does not support partner SSO: second-screen authentication.
    case unsupported
    /// The TV provider's session on the device has expired.
    case expired

    var summary: String {
        switch self {
        case .happy: return "partner SSO through the gateway"
        case .denied: return "access to the TV provider account denied, second-screen fallback"
        case .unsupported: return "TV provider without partner SSO, second-screen fallback"
        case .expired: return "expired TV provider session, second-screen fallback"
        }
    }
}
