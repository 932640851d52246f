import Foundation
import FuzzSupport
@_spi(Benchmarks) import Gateway

/// Target `partner-status`.
///
/// Invariant: decoding any `AP-Partner-Framework-Status` value (base64 of strict JSON) returns a
/// status or a refusal — no crash, no hang, bounded memory — and a decoded status round-trips:
/// its own header value decodes again to the same verdict and label.
@main
enum PartnerStatusTarget {
    static func main() {
        FuzzDriver.run { data, size in PartnerStatusTarget.testOne(data, size) }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let value = String(decoding: FuzzDriver.input(data, size), as: UTF8.self)
        guard let status = try? PartnerStatusHeader.decode(value) else { return 0 }
        let now = FuzzFixture.now
        let verdict = status.verdict(now: now)
        _ = PartnerStatusHeader.label(verdict)
        _ = try? PartnerStatusHeader.grantedProvider(verdict)
        _ = try? PartnerStatusHeader.mvpd(for: verdict, trustStore: FuzzFixture.trustStore)
        guard let again = try? PartnerStatusHeader.decode(status.headerValue) else {
            FuzzFailure.violated("a decoded partner status does not decode from its own header value")
        }
        if again.verdict(now: now) != verdict { FuzzFailure.violated("the verdict changes across a round trip") }
        return 0
    }
}
