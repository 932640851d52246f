/// Who the demo plays: the requestor, the TV providers, the resources it asks for. The defaults
/// match the reference upstream's built-in configuration.
public struct DemoSettings: Sendable {
    public var requestor = "REF"
    /// A TV provider with partner SSO.
    public var mvpd = "Cablevision"
    /// Its platform-mapping id (what VSA reports).
    public var providerID = "Cablevision"
    /// A TV provider without partner SSO (the `unsupported` scenario).
    public var fallbackMVPD = "SecondScreenTV"
    /// A resource the MVPD permits, and one it denies.
    public var resource = "REF"
    public var deniedResource = "premium-sports"

    public init() {}
}
