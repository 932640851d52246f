import CLITestSupport
import Foundation
import SAMLEncoding
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

    static func options(
        _ sign: SignTarget = .assertion, user: String = "alice@example.com", _ configure: (inout IssueOptions) -> Void = { _ in }
    ) -> IssueOptions {
        var options = IssueOptions(mvpd: mvpd, user: user, attributes: attributes, sign: sign)
        configure(&options)
        return options
    }

    static func issue(
        _ sign: SignTarget = .assertion, idp: TestIdentityProvider = rsaIdP, user: String = "alice@example.com",
        _ configure: (inout IssueOptions) -> Void = { _ in }
    ) -> String {
        try! idp.issueString(options(sign, user: user, configure))
    }

    static func store(_ pairs: [IdPKeyPair] = [rsaPair], issuer: String? = nil) -> TrustStore {
        TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: pairs.map(\.certificatePEM), issuer: issuer)])
    }

    static func verifier(
        _ pairs: [IdPKeyPair] = [rsaPair], issuer: String? = nil, replay: (any ReplayCache)? = nil,
        _ configure: (inout VerificationOptions) -> Void = { _ in }
    ) -> Verifier {
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

    /// Verifies `xml` as the gateway forwards it: its cookbook normalization first, then (when
    /// that fails) the original with `fallback`.
    static func forwarded(
        _ xml: String, _ verifier: Verifier = verifier(), fallback: NormalizationFallback = .equivalentTree
    )
        -> Result<VerifiedResponse, VerificationError>
    {
        let document = try! UnverifiedDocument(Array(xml.utf8), decodedFrom: .raw)
        return Result { () throws(VerificationError) in
            try verifier.verifyForForwarding(document, fallback: fallback, mvpd: mvpd).response
        }
    }

    /// What the cookbook's normalization makes of a value inside a document: each run of blanks
    /// and tabs one blank, line breaks deleted.
    static func normalizedValue(_ value: String) -> String {
        value.replacing(/[ \t]+/, with: " ").replacingOccurrences(of: "\n", with: "")
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
