/// What the start-up check of the shared replay store found (``SharedReplayStore/checkAtStartUp()``):
/// one `SET … NX PX` after the login, as every exchange will send it.
package enum ReplayStoreCheck: Sendable, Equatable {
    /// Redis took the login (AUTH, SELECT) and the command.
    case ready
    /// Redis could not be asked, or refused for reasons that may pass (down, unreachable, slow,
    /// a replica, loading, a rejected password, out of memory): the gateway starts anyway —
    /// pass-through does not need Redis — and `replay-store-failure` answers the exchanges
    /// until Redis works. The reason was logged.
    case unavailable(String)
    /// Redis answered and rejected what the gateway sends (an unknown command or syntax — a
    /// Redis older than 2.6.12, or not Redis —, or a database SELECT refuses): every exchange
    /// would be refused or go unrecorded until the configuration changes, so `serve` refuses
    /// to start. The text says why, without the password.
    case unsupported(String)
}
