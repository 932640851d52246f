import Foundation

/// One authentication the backend holds for a requestor + device + MVPD: a v1 authentication
/// token and a v2 profile are two views of it (the same backend answers both APIs).
public struct ReferenceAuthentication: Sendable {
    public enum Source: String, Sendable {
        /// A partner (Apple) SSO token exchange: v1 `tokenSource` `Apple`, v2 profile `appleSSO`.
        case partner
        /// A second-screen / basic authentication at the MVPD's login page.
        case basic
    }

    public var requestor: String
    public var deviceID: String
    public var mvpd: String
    public var source: Source
    /// An opaque, hashed user id (never the NameID itself).
    public var userID: String
    public var notBefore: Date
    public var notAfter: Date

    /// v1 user metadata `tokenSource`.
    public var tokenSource: String { source == .partner ? "Apple" : mvpd }
    /// v2 profile `type`.
    public var profileType: String { source == .partner ? "appleSSO" : "regular" }
}
