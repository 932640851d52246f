import FuzzSupport
import SAMLVerification

/// Target `verifier`.
///
/// Invariant: on any input (mutations of genuine responses signed by the trusted seed key) the
/// verifier returns a verdict — no crash, no hang, no sanitizer report — and whenever the verdict
/// is valid, the NameID, the attributes and the Issuer are exactly the genuine ones
/// (``FuzzFixture``). A mutation of signed content that still verifies is a finding. The clock
/// is fixed inside the seeds' validity window, and there is no replay cache, so every input is
/// judged on its own.
@main
enum VerifierTarget {
    static func main() {
        FuzzDriver.run { data, size in VerifierTarget.testOne(data, size) }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = FuzzDriver.input(data, size)
        guard let verified = try? FuzzFixture.verifier.verify(input, mvpd: FuzzFixture.mvpd, now: FuzzFixture.now) else { return 0 }
        FuzzFixture.requireGenuineIdentity(verified, "verified response")
        return 0
    }
}
