/// One line of the transcript: a call the app (or the VSA framework, or the user on a second
/// screen) makes, what came back, and whether it is what the cookbook says.
package struct DemoStep: Sendable {
    package var number: Int
    package var title: String
    /// `GET /api/v1/checkauthn`, or `VSA` for a step on the device.
    package var call: String
    /// HTTP status, `nil` for device-side steps.
    package var status: Int?
    /// The field that decides the step (`actionName=partner_profile`, `tokenSource=Apple`,
    /// `code=invalid_header_pfs_permission_access_not_granted` …).
    package var decisive: String
    /// What the cookbook says, as `STATUS decisive` (or `decisive` alone).
    package var expected: String
    package var passed: Bool
}
