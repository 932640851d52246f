import CXMLSec
import Foundation

extension TrustedKey {
    /// The EC curves a trusted key may use, by OpenSSL's name: P-256, P-384, P-521 (the curves
    /// XML Signature's ECDSA algorithms are defined and deployed with).
    static let allowedCurves: Set<String> = ["prime256v1", "secp384r1", "secp521r1"]
    /// The smallest RSA modulus trusted: RSA-1024 is within reach of a well-funded forger.
    static let minimumRSABits = 2048

    /// `RSA-1024`, `EC secp256k1`, … for a key below the minimum; `nil` for one that meets it
    /// (or a type other than RSA and EC, whose signature algorithms the allow-list governs).
    static func weakness(of data: xmlSecKeyDataPtr) -> String? {
        var bits: Int32 = 0
        var group = [CChar](repeating: 0, count: 64)
        let kind = cxmlsec_key_strength(data, &bits, &group, group.count)
        switch kind {
        case 1:
            return bits < minimumRSABits ? "RSA-\(bits)" : nil
        case 2:
            let name = String(decoding: group.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return allowedCurves.contains(name) ? nil : "EC \(name.isEmpty ? "explicit-parameters" : name)"
        default:
            return nil
        }
    }

    /// The certificate's `notAfter` read by OpenSSL, for the certificates swift-certificates
    /// refuses to parse (DSA, unusual curves, RSA under 2048 bits); `nil` when OpenSSL cannot
    /// read it either.
    static func openSSLNotAfter(_ der: [UInt8]) -> Date? {
        var seconds: Int64 = 0
        let read = der.withUnsafeBufferPointer { cxmlsec_certificate_not_after($0.baseAddress, $0.count, &seconds) }
        return read == 0 ? Date(timeIntervalSince1970: TimeInterval(seconds)) : nil
    }
}
