import FuzzSupport
import SAMLVerification

/// Target `verifier`.
///
/// Invariant: on any input (mutations of genuine responses signed by the trusted seed key) the
/// verifier returns a verdict — no crash, no hang, no sanitizer report — and whenever the verdict
/// is valid, the NameID, the attributes and the Issuer are exactly the genuine ones
/// (``FuzzFixture``). A mutation of signed content that still verifies is a finding. The clock
/// is fixed inside the seeds' validity window, and there is no replay cache, so every input is
/// judged on its own. Differential: the same verifier with libxml2 canonicalizing (libxmlsec1's
/// path, `--libxml2-c14n`) reaches the same verdict — both accept, with the genuine identity, or
/// both refuse (the reasons may differ: the native check tells a key that signed nothing here,
/// `key_not_trusted`, from a signature that does not match, where libxmlsec1 says
/// `signature_invalid` for both).
@main
enum VerifierTarget {
    static func main() {
        FuzzDriver.run { data, size in VerifierTarget.testOne(data, size) }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = FuzzDriver.input(data, size)
        let native = verdict(FuzzFixture.verifier, input)
        let libxml2 = verdict(FuzzFixture.libxml2Verifier, input)
        switch (native, libxml2) {
        case (.success(let verified), .success(let other)):
            FuzzFixture.requireGenuineIdentity(verified, "verified response")
            FuzzFixture.requireGenuineIdentity(other, "verified response, libxml2 canonicalizing")
        case (.failure, .failure):
            break
        default:
            FuzzFailure.violated("native and libxml2 canonicalization disagree: \(describe(native)) / \(describe(libxml2))")
        }
        return 0
    }

    static func verdict(_ verifier: Verifier, _ input: UnsafeRawBufferPointer) -> Result<VerifiedResponse, VerificationError> {
        Result { () throws(VerificationError) in try verifier.verify(input, mvpd: FuzzFixture.mvpd, now: FuzzFixture.now) }
    }

    static func describe(_ verdict: Result<VerifiedResponse, VerificationError>) -> String {
        switch verdict {
        case .success: return "accepted"
        case .failure(let error): return error.code.rawValue
        }
    }
}
