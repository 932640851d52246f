extension InFlightRequest {
    /// The exchange was verified: its digests, for the audit line (a later refusal, a replay,
    /// an upstream failure, keeps them).
    func noteVerified(_ prepared: PreparedExchange) {
        assertionHash = prepared.assertionHash
        subjectHMAC = prepared.subjectHMAC
    }

    /// The exchange's MVPD (when known) and whether it goes to the backend.
    func noteDecision(mvpd: String?, forwarded: Bool) {
        self.mvpd = mvpd
        self.forwarded = forwarded
    }

    /// The audit line of this exchange, as it ends: forwarded when sent to the backend and not
    /// refused by the gateway since (an upstream failure answers with its own code).
    func auditRecord() -> AuditRecord {
        let (seconds, nanoseconds) = AuditRecord.now()
        return AuditRecord(
            seconds: seconds, nanoseconds: nanoseconds, requestID: requestID, traceID: trace.traceID, route: routeLabel,
            mvpd: mvpd ?? GatewayMetrics.unknownMVPD, forwarded: forwarded && reason == nil, status: status, reason: reason, wouldRefuse: wouldRefuse,
            assertion: assertionHash, subject: subjectHMAC)
    }
}
