/// Who the demo plays: the requestor, the TV providers, the resources it asks for. The defaults
/// match the reference upstream's built-in configuration.
package struct DemoSettings: Sendable {
    package var requestor = "REF"
    /// A TV provider with partner SSO.
    package var mvpd = "Cablevision"
    /// Its platform-mapping id (what VSA reports).
    package var providerID = "Cablevision"
    /// A TV provider without partner SSO (the `unsupported` scenario).
    package var fallbackMVPD = "SecondScreenTV"
    /// A resource the MVPD permits, and one it denies.
    package var resource = "REF"
    package var deniedResource = "premium-sports"

    package init() {}
}
