/// A REST API v2 call that passed the backend's common checks: a bearer access token it issued
/// (or one of the configuration's static tokens), a known service provider, the device
/// headers.
struct V2Caller: Sendable {
    var serviceProvider: ReferenceRequestor
    /// The `AP-Device-Identifier` value as sent (`fingerprint <base64>`).
    var deviceID: String
}
