import Foundation
import SAMLVerification

/// How `--verify` checks records: the verifier (trust, audience, skew, algorithms), which MVPD's
/// trust applies, and the instant the time conditions are judged at.
@_spi(Benchmarks) public struct BatchVerification: Sendable {
    public var verifier: Verifier
    /// `--mvpd`: the trust for every record. Without it a record's own `mvpd` field decides,
    /// and a trust store with a single MVPD needs neither.
    public var mvpd: String?
    /// `--now`: captures are old; judging them as of their capture time tells forgery from age.
    public var now: Date?

    public init(verifier: Verifier, mvpd: String? = nil, now: Date? = nil) {
        self.verifier = verifier
        self.mvpd = mvpd
        self.now = now
    }

    /// The MVPD whose trust applies to a record naming `recordMVPD`.
    func mvpd(for recordMVPD: String?) throws(RecordError) -> String {
        if let mvpd { return mvpd }
        if let recordMVPD { return recordMVPD }
        let all = verifier.trustStore.mvpds
        if all.count == 1 { return all[0] }
        throw RecordError(
            .unknownMVPD,
            "the record names no MVPD and the trust store has \(all.count): give --mvpd or carry an mvpd field")
    }
}
