import Foundation
import TestIdP
import Testing

@testable import SAMLVerification

/// How long an assertion's replay record lives when several MVPD entries trust one IdP and
/// issuer (a documented layout) under different clock-skew policies.
@Suite struct ReplayWindowTests {
    @Test("the record outlives the loosest window: an assertion used under a strict MVPD is refused under a loose one later")
    func sharedIssuerDifferentSkews() throws {
        var strict = try IdentityProviderTrust(mvpd: "Strict", certificatesPEM: [Fixtures.rsaPair.certificatePEM])
        strict.policy.skew = 10
        var loose = try IdentityProviderTrust(mvpd: "Loose", certificatesPEM: [Fixtures.rsaPair.certificatePEM])
        loose.policy.skew = 600
        let store = TrustStore(providers: [strict, loose])
        #expect(store.largestPolicySkew == 600)
        let cache = InMemoryReplayCache()
        let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: cache)
        // Acceptable until 5 s from now (NotOnOrAfter), plus each MVPD's skew.
        let now = Date()
        let xml = Fixtures.issue(.assertion) {
            $0.now = now.addingTimeInterval(-295)
            $0.ttl = 300
        }
        let first = try verifier.verify(Array(xml.utf8), mvpd: "Strict", now: now)
        #expect(first.replayClaim.map { $0.expiresAt.timeIntervalSince(now) }.map { (600...610).contains($0) } == true)
        // A minute later: past Strict's window, within Loose's.
        do {
            _ = try verifier.verify(Array(xml.utf8), mvpd: "Loose", now: now.addingTimeInterval(60))
            Issue.record("the same assertion was accepted again under the looser MVPD")
        } catch {
            #expect(error.code == .replayed)
        }
    }

    @Test("the gateway's own skew counts when it is larger than every policy's")
    func baseSkewLargest() throws {
        var strict = try IdentityProviderTrust(mvpd: "Strict", certificatesPEM: [Fixtures.rsaPair.certificatePEM])
        strict.policy.skew = 10
        let plain = try IdentityProviderTrust(mvpd: "Plain", certificatesPEM: [Fixtures.rsaPair.certificatePEM])
        let verifier = Verifier(
            trustStore: TrustStore(providers: [strict, plain]), options: VerificationOptions(), replayCache: InMemoryReplayCache())
        let now = Date()
        let xml = Fixtures.issue(.assertion) {
            $0.now = now.addingTimeInterval(-295)
            $0.ttl = 300
        }
        _ = try verifier.verify(Array(xml.utf8), mvpd: "Strict", now: now)
        do {
            _ = try verifier.verify(Array(xml.utf8), mvpd: "Plain", now: now.addingTimeInterval(60))
            Issue.record("replayed under the MVPD without a policy (skew 120)")
        } catch {
            #expect(error.code == .replayed)
        }
    }
}
