/// What the start-up check of the shared throttle found (``SharedThrottle/checkAtStartUp(on:)``):
/// its script loaded and run once, as every exchange will run it.
enum ThrottleStoreCheck: Sendable, Equatable {
    /// Redis ran the script.
    case ready
    /// Redis could not be asked, or could not run the script for now (down, unreachable, slow,
    /// out of memory, a rejected login): the gateway starts anyway — the throttle fails open —
    /// and exchanges are throttled again once Redis answers. The reason was logged.
    case unavailable(String)
    /// Redis answered and refuses the script (an ACL without it, no scripting, older than 5):
    /// every exchange would go unthrottled until the configuration changes, so the gateway
    /// refuses to start. The text says why and what to allow, without the password.
    case refused(String)
}
