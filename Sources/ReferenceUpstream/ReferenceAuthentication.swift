import Foundation

/// One authentication the backend holds for a requestor + device + MVPD: a v1 authentication
/// token and a v2 profile are two views of it (the same backend answers both APIs).
package struct ReferenceAuthentication: Sendable {
    package enum Source: String, Sendable {
        /// A partner (Apple) SSO token exchange: v1 `tokenSource` `Apple`, v2 profile `appleSSO`.
        case partner
        /// A second-screen / basic authentication at the MVPD's login page.
        case basic
    }

    package var requestor: String
    package var deviceID: String
    package var mvpd: String
    package var source: Source
    /// An opaque, hashed user id (never the NameID itself).
    package var userID: String
    package var notBefore: Date
    package var notAfter: Date

    /// v1 user metadata `tokenSource`.
    package var tokenSource: String { source == .partner ? "Apple" : mvpd }
    /// v2 profile `type`.
    package var profileType: String { source == .partner ? "appleSSO" : "regular" }
}
