/// One line of the transcript: a call the app (or the VSA framework, or the user on a second
/// screen) makes, what came back, and whether it is what the cookbook says.
public struct DemoStep: Sendable {
    public var number: Int
    public var title: String
    /// `GET /api/v1/checkauthn`, or `VSA` for a step on the device.
    public var call: String
    /// HTTP status, `nil` for device-side steps.
    public var status: Int?
    /// The field that decides the step (`actionName=partner_profile`, `tokenSource=Apple`,
    /// `code=VSA403` …).
    public var decisive: String
    /// What the cookbook says, as `STATUS decisive` (or `decisive` alone).
    public var expected: String
    public var passed: Bool
}
