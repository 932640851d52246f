import Foundation

/// A second-screen login waiting for the user: a v1 registration code or a v2 basic
/// authentication session code. The reference MVPD login form completes it.
struct PendingLogin: Sendable {
    var code: String
    var requestor: String
    var deviceID: String
    /// Chosen up front, or at the login form.
    var mvpd: String?
    var generated: Date
    var expires: Date
    /// v2 basic sessions: parameters still to be supplied by a resume (`PUT`).
    var missingParameters: [String] = []
}
