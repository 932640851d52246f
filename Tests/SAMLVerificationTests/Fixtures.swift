import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Keys, identity providers and helpers shared by the tests. Keys are generated once.
enum Fixtures {
    static let mvpd = "TestMVPD"
    static let rsaPair = try! IdPKeyPair.generate(.rsa2048, commonName: "test IdP RSA")
    static let ecPair = try! IdPKeyPair.generate(.p256, commonName: "test IdP EC")
    static let rotatedPair = try! IdPKeyPair.generate(.rsa2048, commonName: "test IdP next key")
    static let attackerPair = try! IdPKeyPair.generate(.rsa2048, commonName: "attacker")

    static let rsaIdP = try! TestIdentityProvider(keyPair: rsaPair)
    static let ecIdP = try! TestIdentityProvider(keyPair: ecPair)
    static let attackerIdP = try! TestIdentityProvider(keyPair: attackerPair)

    static let attributes = [
        SAMLAttribute("userID", "u-12345"),
        SAMLAttribute(name: "channelID", values: ["ESPN", "HBO"]),
    ]

    static func options(_ sign: SignTarget = .assertion, user: String = "alice@example.com", _ configure: (inout IssueOptions) -> Void = { _ in }) -> IssueOptions {
        var options = IssueOptions(mvpd: mvpd, user: user, attributes: attributes, sign: sign)
        configure(&options)
        return options
    }

    static func issue(_ sign: SignTarget = .assertion, idp: TestIdentityProvider = rsaIdP, user: String = "alice@example.com",
                      _ configure: (inout IssueOptions) -> Void = { _ in }) -> String {
        try! idp.issueString(options(sign, user: user, configure))
    }

    static func store(_ pairs: [IdPKeyPair] = [rsaPair], issuer: String? = nil) -> TrustStore {
        TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: pairs.map(\.certificatePEM), issuer: issuer)])
    }

    static func verifier(_ pairs: [IdPKeyPair] = [rsaPair], issuer: String? = nil, replay: (any ReplayCache)? = nil,
                         _ configure: (inout VerificationOptions) -> Void = { _ in }) -> Verifier {
        var options = VerificationOptions()
        configure(&options)
        return Verifier(trustStore: store(pairs, issuer: issuer), options: options, replayCache: replay)
    }

    /// Verifies and returns the error code, or `nil` when the response was accepted.
    static func code(_ xml: String, _ verifier: Verifier = verifier(), inResponseTo: String? = nil) -> VerificationError.Code? {
        do {
            _ = try verifier.verify(Array(xml.utf8), mvpd: mvpd, expectedInResponseTo: inResponseTo)
            return nil
        } catch {
            return error.code
        }
    }

    static func accept(_ xml: String, _ verifier: Verifier = verifier(), sourceLocation: SourceLocation = #_sourceLocation) -> VerifiedResponse? {
        do {
            return try verifier.verify(Array(xml.utf8), mvpd: mvpd)
        } catch {
            Issue.record("expected acceptance, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

/// Text surgery on compact signed XML, for building attacks the way an attacker would.
extension String {
    /// The first substring from `start` through the matching `end` (inclusive), non-nested.
    func element(_ start: String, _ end: String) -> String {
        guard let s = range(of: start), let e = range(of: end, range: s.upperBound..<endIndex) else {
            fatalError("element \(start) not found")
        }
        return String(self[s.lowerBound..<e.upperBound])
    }

    /// The first `saml:Assertion` element (assumes no nested Assertion).
    var assertionElement: String { element("<saml:Assertion", "</saml:Assertion>") }

    /// The first `ds:Signature` element (assumes no nested Signature).
    var signatureElement: String { element("<ds:Signature", "</ds:Signature>") }

    /// The whole `samlp:Response` element.
    var responseElement: String { element("<samlp:Response", "</samlp:Response>") }

    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = range(of: target) else { fatalError("\(target) not found") }
        return replacingCharacters(in: r, with: replacement)
    }

    func removingFirst(_ target: String) -> String { replacingFirst(target, with: "") }

    /// Value of the first `ID="…"` attribute after `marker`.
    func id(after marker: String) -> String {
        let tail = self[range(of: marker)!.upperBound...]
        let start = tail.range(of: "ID=\"")!.upperBound
        let end = tail[start...].firstIndex(of: "\"")!
        return String(tail[start..<end])
    }

    var responseID: String { id(after: "<samlp:Response") }
    var assertionID: String { id(after: "<saml:Assertion") }
}
