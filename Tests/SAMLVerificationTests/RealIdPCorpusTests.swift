import CLITestSupport
import Crypto
import Foundation
import SAMLVerification
import Testing

/// Every response of the real-IdP corpus (`RealIdP/`, see its PROVENANCE.md) through the real
/// ``Verifier``: genuine ones accepted with the NameID their peer test reads — also as the
/// gateway forwards them — forged ones refused with the code the manifest names, and the peers'
/// own tamperings of genuine ones refused too.
@Suite struct RealIdPCorpusTests {
    @Test(arguments: RealIdPCorpus.entries)
    func verdict(_ entry: RealIdPEntry) throws {
        let result = try RealIdPCorpus.verify(entry)
        switch (entry.expect, result) {
        case ("accept", .success(let verified)):
            #expect(verified.nameID == entry.nameID, "\(entry.id): NameID")
            // As the gateway forwards it: the cookbook's normalization verifies, or changes only
            // layout whitespace.
            let forwarded = try RealIdPCorpus.forwarded(entry)
            #expect((try? forwarded.get())?.nameID == entry.nameID, "\(entry.id): forwarded")
        case ("accept", .failure(let error)):
            Issue.record("\(entry.id): expected acceptance, got \(error.code): \(error.message)")
        case (let code, .success):
            Issue.record("\(entry.id): expected \(code), accepted")
        case (let code, .failure(let error)):
            #expect(error.code.rawValue == code, "\(entry.id): \(error.message)")
            // Refused also as the gateway verifies what it forwards (the normalization first),
            // with either fallback.
            for fallback in [NormalizationFallback.equivalentTree, .original] {
                let forwarded = try? RealIdPCorpus.forwarded(entry, fallback: fallback)
                #expect((try? forwarded?.get()) == nil, "\(entry.id): accepted as forwarded (\(fallback))")
            }
        }
    }

    /// The native signature check against libxmlsec1's path with libxml2 canonicalizing
    /// (`--libxml2-c14n`): the same verdict on every response of the corpus — accepted with the
    /// same identity, or refused for the same reason.
    @Test(arguments: RealIdPCorpus.entries)
    func libxml2CanonicalizationGivesTheSameVerdict(_ entry: RealIdPEntry) throws {
        let native = try RealIdPCorpus.verify(entry)
        let libxml2 = try RealIdPCorpus.verify(entry) { $0.nativeCanonicalization = false }
        switch (native, libxml2) {
        case (.success(let a), .success(let b)):
            #expect(a.nameID == b.nameID && a.attributes == b.attributes && a.issuer == b.issuer, "\(entry.id)")
        case (.failure(let a), .failure(let b)):
            #expect(a.code == b.code, "\(entry.id): \(a.message) / \(b.message)")
        default:
            Issue.record("\(entry.id): native \(native), libxml2 \(libxml2)")
        }
    }

    @Test func theManifestDescribesEveryFile() throws {
        let entries = RealIdPCorpus.entries
        #expect(Set(entries.map(\.id)).count == entries.count, "ids are unique")
        let fm = FileManager.default
        let root = RealIdPCorpus.directory.path
        var listed: Set<String> = ["manifest.json", "PROVENANCE.md"]
        for entry in entries {
            listed.insert(entry.file)
            if let certificate = entry.certificate { listed.insert(certificate) }
            #expect(entry.expect == "accept" ? entry.nameID != nil : entry.nameID == nil, "\(entry.id)")
            #expect(entry.source.commit.count == 40 && !entry.peerTest.isEmpty, "\(entry.id)")
            #expect(entry.certificate != nil || entry.kind == .encrypted, "\(entry.id) names the certificate its peer trusts")
            // The bytes are the peer's, as PROVENANCE.md records them.
            let digest = SHA256.hash(data: try RealIdPCorpus.fileBytes(entry)).map { String(format: "%02x", $0) }.joined()
            #expect(digest == entry.sha256, "\(entry.id): the file differs from the one recorded")
        }
        let present = (fm.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
            var isDirectory: ObjCBool = false
            return fm.fileExists(atPath: root + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(Set(present).subtracting(listed).isEmpty, "files the manifest does not describe")
        #expect(listed.subtracting(present).isEmpty, "files the manifest names that are missing")
    }

    @Test func theCorpusKeepsItsSize() {
        // Genuine responses of real IdPs and forgeries; docs/robustness.md quotes these figures.
        let entries = RealIdPCorpus.entries
        let accepted = entries.filter { $0.expect == "accept" }
        #expect(entries.filter { $0.kind == .genuine }.count >= 43)
        #expect(accepted.count >= 51)
        #expect(entries.filter { $0.kind == .forged }.count >= 43)
        #expect(Set(accepted.map(\.source.repository)).count == 4)
    }

    // MARK: the canonicalization restriction

    @Test func exclusiveOnlyRefusesExactlyTheInclusiveOnes() throws {
        for entry in RealIdPCorpus.entries where entry.expect == "accept" {
            let text = String(decoding: try RealIdPCorpus.document(entry), as: UTF8.self)
            let inclusive = text.contains("http://www.w3.org/TR/2001/REC-xml-c14n-20010315") || text.contains("http://www.w3.org/2006/12/xml-c14n11")
            let restricted = try RealIdPCorpus.verify(entry) { $0.allowInclusiveCanonicalization = false }
            switch restricted {
            case .success: #expect(!inclusive, "\(entry.id)")
            case .failure(let error): #expect(inclusive && error.code == .algorithmNotAllowed, "\(entry.id): \(error.code)")
            }
        }
    }

    // MARK: tampering with genuine responses, as the peers' tests do

    @Test func googleResponseWithAnInjectedComment() throws {
        // crewjam/saml TestSPRejectsInjectedComment, CVE-2018-7340.
        let entry = RealIdPCorpus.entry("crewjam-google-rejectsinjectedcomment")
        let text = String(decoding: try RealIdPCorpus.document(entry), as: UTF8.self)
        let inside = text.replacingFirst("ross@octolabs.io", with: "ross@<!-- and a comment -->octolabs.io")
        #expect((try? RealIdPCorpus.verify(entry, document: Array(inside.utf8)).get())?.nameID == "ross@octolabs.io")
        let extended = text.replacingFirst("ross@octolabs.io", with: "ross@octolabs.io<!-- and a comment -->.example.com")
        #expect(try code(entry, extended) == .signatureInvalid)
    }

    @Test func googleResponseWithAMalformedAttributeName() throws {
        // crewjam/saml TestSPRejectsMalformedResponse.
        let entry = RealIdPCorpus.entry("crewjam-google-rejectsmalformedresponse")
        let text = String(decoding: try RealIdPCorpus.document(entry), as: UTF8.self)
        #expect(try code(entry, text.replacingFirst("<saml2p:Response", with: "<saml2p:Response ::foo=\"bar\"")) == .malformedXML)
    }

    @Test func anotherIssuerWrittenIntoTheResponse() throws {
        // python3-saml testIsValidSign: the Response's Issuer text replaced.
        for (id, expected) in [
            ("python-signed-assertion-response2", VerificationError.Code.issuerMismatch), ("python-double-signed-response2", .signatureInvalid),
        ] {
            let entry = RealIdPCorpus.entry(id)
            let text = String(decoding: try RealIdPCorpus.document(entry), as: UTF8.self)
            let issuer = "https://idp.example.com/simplesaml/saml2/idp/metadata.php"
            #expect(text.contains(issuer))
            #expect(try code(entry, text.replacingFirst(issuer, with: "https://example.com/other-idp")) == expected, "\(id)")
        }
    }

    /// Responses of real IdPs signed over the whole document (`URI=""`): inclusive C14N 1.1,
    /// inclusive 1.0 with no canonicalization transform, exclusive C14N.
    @Test(arguments: ["gosaml2-oktadev-02", "ruby-without-reference-uri", "python-without-reference-uri"])
    func wholeDocumentSignatureAttacked(_ id: String) throws {
        let entry = RealIdPCorpus.entry(id)
        let text = String(decoding: try RealIdPCorpus.document(entry), as: UTF8.self)
        let nameID = try #require(entry.nameID)
        #expect(try code(entry, text) == nil)
        // Anything changed anywhere, the Response's own attributes and namespaces included.
        #expect(try code(entry, text.replacingFirst(nameID, with: "mallory@evil.example")) == .signatureInvalid)
        #expect(try code(entry, text.replacingFirst("Version=\"2.0\"", with: "Version=\"2.0\" Extra=\"x\"")) == .signatureInvalid)
        // A namespace declared on the Response and used nowhere: rendered (so signed) by inclusive
        // C14N only; exclusive C14N leaves it out of what is signed, harmlessly.
        let declared = try code(entry, text.replacingFirst("<samlp:Response ", with: "<samlp:Response xmlns:evil=\"urn:evil\" "))
        #expect(declared == (text.contains("http://www.w3.org/2001/10/xml-exc-c14n#\"") ? nil : .signatureInvalid))
        // The signature moved into the Assertion still digests the same document, and is refused there.
        let signature = Self.signatureElement(text)
        let withoutSignature = text.replacingFirst(signature, with: "")
        let assertionStart = try #require(
            withoutSignature.range(
                of: "Assertion ", options: [], range: withoutSignature.range(of: "<samlp:Status")!.upperBound..<withoutSignature.endIndex))
        let issuerEnd = try #require(
            withoutSignature.range(
                of: "</([A-Za-z0-9]+:)?Issuer>", options: .regularExpression, range: assertionStart.upperBound..<withoutSignature.endIndex))
        var moved = withoutSignature
        moved.insert(contentsOf: signature, at: issuerEnd.upperBound)
        #expect(try code(entry, moved) == .referenceMismatch)
        // A comment in the NameID is outside the digest and cannot shorten the identity.
        let split = nameID.index(nameID.startIndex, offsetBy: nameID.count / 2)
        let commented = text.replacingFirst(nameID, with: String(nameID[..<split]) + "<!-- x -->" + String(nameID[split...]))
        #expect((try? RealIdPCorpus.verify(entry, document: Array(commented.utf8)).get())?.nameID == nameID)
    }

    private func code(_ entry: RealIdPEntry, _ text: String) throws -> VerificationError.Code? {
        switch try RealIdPCorpus.verify(entry, document: Array(text.utf8)) {
        case .success: nil
        case .failure(let error): error.code
        }
    }

    /// The first `Signature` element, whatever its prefix (`ds:Signature` or a default namespace).
    static func signatureElement(_ text: String) -> String {
        let start = text.range(of: "<ds:Signature") ?? text.range(of: "<Signature ")!
        let close = text.hasPrefix("<ds:", range: start) ? "</ds:Signature>" : "</Signature>"
        let end = text.range(of: close, range: start.upperBound..<text.endIndex)!
        return String(text[start.lowerBound..<end.upperBound])
    }
}

extension String {
    fileprivate func hasPrefix(_ prefix: String, range: Range<String.Index>) -> Bool {
        self[range.lowerBound...].hasPrefix(prefix)
    }
}
