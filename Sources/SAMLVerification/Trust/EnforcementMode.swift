/// Whether the gateway acts on its verdicts for an MVPD: `enforce` refuses what fails
/// verification; `report-only` verifies just the same but forwards what it would refuse, and
/// reports it — how a verifier is put in front of a backend that takes sign-ins today without
/// refusing genuine users on day one.
public enum EnforcementMode: String, Sendable, CaseIterable {
    case enforce
    case reportOnly = "report-only"
}
