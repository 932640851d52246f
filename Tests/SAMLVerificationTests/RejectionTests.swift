import Foundation
import SAMLVerification
import TestIdP
import Testing

/// One test (at least) per rejection code, each building the bad document.
@Suite struct RejectionTests {
    // MARK: signature

    @Test func signatureRemoved() {
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(xml.removingFirst(xml.signatureElement)) == .signatureMissing)
        #expect(Fixtures.code(Fixtures.issue(.none)) == .signatureMissing)
    }

    @Test func attackerKeyEmbeddedInKeyInfo() {
        // The attacker re-signs with their own key and embeds their certificate.
        #expect(Fixtures.code(Fixtures.issue(.assertion, idp: Fixtures.attackerIdP)) == .keyNotTrusted)
        #expect(Fixtures.code(Fixtures.issue(.response, idp: Fixtures.attackerIdP)) == .keyNotTrusted)
        // … or the raw public key in KeyValue.
        #expect(Fixtures.code(Fixtures.issue(.assertion, idp: Fixtures.attackerIdP) { $0.keyInfo = .keyValue }) == .keyNotTrusted)
    }

    @Test func attackerReplacesKeyInfoOfGenuineResponse() {
        // Genuine signature, KeyInfo swapped for the attacker's certificate: still the trusted
        // key decides, so this one verifies (KeyInfo is not trusted, nor needed).
        let xml = Fixtures.issue(.assertion)
        let attackerCert = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP).element("<ds:X509Certificate>", "</ds:X509Certificate>")
        let swapped = xml.replacingFirst(xml.element("<ds:X509Certificate>", "</ds:X509Certificate>"), with: attackerCert)
        #expect(Fixtures.code(swapped) == nil)
    }

    @Test func valueTamperedAfterSigning() {
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(xml.replacingFirst("u-12345", with: "u-99999")) == .signatureInvalid)
        let response = Fixtures.issue(.response)
        #expect(Fixtures.code(response.replacingFirst("alice@example.com", with: "bob@example.com")) == .signatureInvalid)
    }

    @Test func signedInfoTamperedIsNotTrusted() {
        let xml = Fixtures.issue(.assertion)
        let digest = xml.element("<ds:DigestValue>", "</ds:DigestValue>")
        let altered = digest.replacingFirst("<ds:DigestValue>", with: "<ds:DigestValue>AAAA")
        // SignedInfo changed: the signature over it no longer verifies (checked before any
        // digest, so this is no trusted key's, not a digest mismatch).
        #expect(Fixtures.code(xml.replacingFirst(digest, with: altered)) == .keyNotTrusted)
        // A different signature value, or a SignedInfo changed in a way the digests do not
        // see: no trusted key verifies it any more.
        let value = xml.element("<ds:SignatureValue>", "</ds:SignatureValue>")
        let inner = value.dropFirst("<ds:SignatureValue>".count)
        let replacement = inner.hasPrefix("AAAA") ? "BBBB" : "AAAA"
        #expect(Fixtures.code(xml.replacingFirst(value, with: "<ds:SignatureValue>" + replacement + inner.dropFirst(4))) == .keyNotTrusted)
        let c14n = xml.replacingFirst(
            "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
            with: "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#WithComments\"/>")
        #expect(Fixtures.code(c14n) == .keyNotTrusted)
    }

    @Test func commentInjectionInNameID() throws {
        let user = "alice@example.com.evil.com"
        let xml = Fixtures.issue(.assertion, user: user)
        // Comments are not part of the exclusive-C14N digest: the signature stays valid, and
        // the NameID must come out whole.
        let injected = xml.replacingFirst(">\(user)<", with: ">alice@example.com<!---->.evil.com<")
        let verified = try #require(Fixtures.accept(injected))
        #expect(verified.nameID == user)
        // Truncating the value for real is detected.
        #expect(Fixtures.code(xml.replacingFirst(">\(user)<", with: ">alice@example.com<")) == .signatureInvalid)
        // Same for attribute values.
        let attr = xml.replacingFirst(">u-12345<", with: ">u-123<!-- x -->45<")
        #expect(Fixtures.accept(attr)?.attributes["userID"] == ["u-12345"])
    }

    @Test func referenceToAnotherElement() {
        // The Assertion's signature moved onto the Response: it references the Assertion's ID,
        // not the element it sits in.
        let xml = Fixtures.issue(.assertion)
        let signature = xml.signatureElement
        let moved = xml.removingFirst(signature).replacingFirst("</saml:Issuer><samlp:Status>", with: "</saml:Issuer>" + signature + "<samlp:Status>")
        #expect(Fixtures.code(moved) == .referenceMismatch)
    }

    @Test func emptyReferenceURI() {
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(xml.replacingFirst("URI=\"#\(xml.assertionID)\"", with: "URI=\"\"")) == .referenceMismatch)
        #expect(Fixtures.code(xml.replacingFirst("URI=\"#\(xml.assertionID)\"", with: "")) == .referenceMismatch)
    }

    @Test func twoReferences() {
        let xml = Fixtures.issue(.assertion)
        let reference = xml.element("<ds:Reference ", "</ds:Reference>")
        #expect(Fixtures.code(xml.replacingFirst(reference, with: reference + reference)) == .referenceMismatch)
    }

    @Test func hmacIsNeverAllowed() {
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.signatureAlgorithm = .hmacSHA256 }) == .algorithmNotAllowed)
        #expect(
            Fixtures.code(Fixtures.issue(.assertion) { $0.signatureAlgorithm = .hmacSHA256 }, Fixtures.verifier { $0.allowSHA1 = true })
                == .algorithmNotAllowed)
    }

    @Test func sha1OnlyWithAllowSHA1() {
        let rsaSHA1 = Fixtures.issue(.assertion) {
            $0.signatureAlgorithm = .rsaSHA1
            $0.digestAlgorithm = .sha1
        }
        #expect(Fixtures.code(rsaSHA1) == .algorithmNotAllowed)
        #expect(Fixtures.code(rsaSHA1, Fixtures.verifier { $0.allowSHA1 = true }) == nil)
        let sha1Digest = Fixtures.issue(.assertion) { $0.digestAlgorithm = .sha1 }
        #expect(Fixtures.code(sha1Digest) == .algorithmNotAllowed)
        #expect(Fixtures.code(sha1Digest, Fixtures.verifier { $0.allowSHA1 = true }) == nil)
    }

    @Test func disallowedTransformAndCanonicalization() {
        let xml = Fixtures.issue(.assertion)
        let xslt = xml.replacingFirst(
            "<ds:Transform Algorithm=\"http://www.w3.org/2000/09/xmldsig#enveloped-signature\"/>",
            with: "<ds:Transform Algorithm=\"http://www.w3.org/TR/1999/REC-xslt-19991116\"/>")
        #expect(Fixtures.code(xslt) == .algorithmNotAllowed)
        // Inclusive C14N is allowed unless the verifier is restricted to exclusive C14N (changing
        // it changes SignedInfo, so no trusted key signed this one).
        let inclusive = xml.replacingFirst(
            "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
            with: "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/TR/2001/REC-xml-c14n-20010315\"/>")
        #expect(Fixtures.code(inclusive) == .keyNotTrusted)
        #expect(Fixtures.code(inclusive, Fixtures.verifier { $0.allowInclusiveCanonicalization = false }) == .algorithmNotAllowed)
        let unknown = xml.replacingFirst(
            "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
            with: "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2006/12/xml-c14n11#Extra\"/>")
        #expect(Fixtures.code(unknown) == .algorithmNotAllowed)
    }

    // MARK: SAML rules

    @Test func expired() {
        let past = Date().addingTimeInterval(-3600)
        #expect(
            Fixtures.code(
                Fixtures.issue(.assertion) {
                    $0.now = past
                    $0.ttl = 300
                }) == .expired)
        // Within the skew it is still accepted.
        #expect(
            Fixtures.code(
                Fixtures.issue(.assertion) {
                    $0.now = Date().addingTimeInterval(-360)
                    $0.ttl = 300
                }) == nil)
        // SubjectConfirmationData expiry alone.
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.subjectNotOnOrAfter = past }) == .expired)
    }

    @Test func notYetValid() {
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.notBefore = Date().addingTimeInterval(600) }) == .notYetValid)
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.notBefore = Date().addingTimeInterval(60) }) == nil)
    }

    @Test func wrongAudience() {
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.audience = "https://sp.evil.example" }) == .wrongAudience)
        #expect(
            Fixtures.code(
                Fixtures.issue(.assertion) { $0.audience = "https://sp.evil.example" },
                Fixtures.verifier { $0.audience = "https://sp.evil.example" }) == nil)
    }

    @Test func failedStatus() throws {
        let xml = Fixtures.issue(.response) { $0.statusCode = "urn:oasis:names:tc:SAML:2.0:status:Requester" }
        do {
            _ = try Fixtures.verifier().verify(Array(xml.utf8), mvpd: Fixtures.mvpd)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .statusNotSuccess)
            #expect(error.message.contains("urn:oasis:names:tc:SAML:2.0:status:Requester"))
            #expect(error.isTrustFailure)
        }
    }

    @Test func issuerMismatch() {
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(xml, Fixtures.verifier(issuer: "https://idp.other.example.com")) == .issuerMismatch)
        #expect(Fixtures.code(xml, Fixtures.verifier(issuer: "https://idp.testmvpd.example.com/saml2/idp")) == nil)
    }

    @Test func inResponseToAndDestination() {
        let xml = Fixtures.issue(.response) { $0.inResponseTo = "_req1" }
        #expect(Fixtures.code(xml, inResponseTo: "_req1") == nil)
        #expect(Fixtures.code(xml, inResponseTo: "_req2") == .inResponseToMismatch)
        #expect(Fixtures.code(Fixtures.issue(.response), inResponseTo: "_req1") == .inResponseToMismatch)
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.expectedDestination = "https://saml.sp.auth.adobe.com/sp/ACS.saml2" }) == nil)
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.expectedDestination = "https://elsewhere.example/acs" }) == .destinationMismatch)
    }

    @Test func replay() {
        let cache = InMemoryReplayCache()
        let verifier = Fixtures.verifier(replay: cache)
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(xml, verifier) == nil)
        #expect(Fixtures.code(xml, verifier) == .replayed)
        // A different assertion is fine.
        #expect(Fixtures.code(Fixtures.issue(.assertion), verifier) == nil)
    }

    @Test func unknownMVPD() {
        let xml = Fixtures.issue(.assertion)
        #expect(throws: VerificationError(.unknownMVPD, "no trust configuration for this MVPD")) {
            try Fixtures.verifier().verify(Array(xml.utf8), mvpd: "Nobody")
        }
    }

    // MARK: malformed input

    @Test func xxe() {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE samlp:Response [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r">&xxe;</samlp:Response>
            """
        #expect(Fixtures.code(xml) == .forbiddenDTD)
    }

    @Test func billionLaughs() {
        var entities = "<!ENTITY lol0 \"lol\">"
        for i in 1...9 {
            entities += "<!ENTITY lol\(i) \"" + String(repeating: "&lol\(i - 1);", count: 10) + "\">"
        }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE lolz [\(entities)]><lolz>&lol9;</lolz>"
        #expect(Fixtures.code(xml) == .forbiddenDTD)
        // The recursive-entity shape that crashes xmlSecFindNode in libxmlsec1 1.2.37.
        let nested = "<!DOCTYPE a [<!ENTITY b \"&c;\"><!ENTITY c \"&b;\">]><a>&b;</a>"
        #expect(Fixtures.code(nested) == .forbiddenDTD)
    }

    @Test func doctype() {
        let xml = Fixtures.issue(.assertion)
        let withDoctype = xml.replacingFirst("<samlp:Response", with: "<!DOCTYPE samlp:Response><samlp:Response")
        #expect(Fixtures.code(withDoctype) == .forbiddenDTD)
        let afterComment = xml.replacingFirst(
            "<samlp:Response", with: "<!-- hi --><?pi x?><!DOCTYPE r SYSTEM \"http://evil.example/x.dtd\"><samlp:Response")
        #expect(Fixtures.code(afterComment) == .forbiddenDTD)
    }

    @Test func oversized() {
        let big = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        #expect(throws: VerificationError.self) { try Fixtures.verifier().verify(big, mvpd: Fixtures.mvpd) }
        #expect((try? Fixtures.verifier().verify(big, mvpd: Fixtures.mvpd)) == nil)
        do {
            _ = try Fixtures.verifier().verify(big, mvpd: Fixtures.mvpd)
        } catch {
            #expect(error.code == .tooLarge)
            #expect(!error.isTrustFailure)
        }
        let xml = Fixtures.issue(.assertion) { $0.padToSize = 8192 }
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.maxSize = 4096 }) == .tooLarge)
    }

    @Test func overDeep() {
        let xml = Fixtures.issue(.assertion)
        let deep = String(repeating: "<d>", count: 300) + String(repeating: "</d>", count: 300)
        #expect(Fixtures.code(xml.replacingFirst(">u-12345<", with: ">u-12345" + deep + "<")) == .tooDeep)
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.maxDepth = 4 }) == .tooDeep)
    }

    @Test func duplicateIDs() {
        let xml = Fixtures.issue(.assertion)
        let dup = "<samlp:Extensions><saml:Foo ID=\"\(xml.assertionID)\"/></samlp:Extensions>"
        #expect(Fixtures.code(xml.replacingFirst("<samlp:Status>", with: dup + "<samlp:Status>")) == .duplicateID)
        // The Response and the Assertion with the same ID.
        let same = xml.replacingFirst("ID=\"\(xml.responseID)\"", with: "ID=\"\(xml.assertionID)\"")
        #expect(Fixtures.code(same) == .duplicateID)
    }

    @Test func twoAssertions() {
        let xml = Fixtures.issue(.assertion)
        let second = xml.assertionElement.replacingFirst("ID=\"\(xml.assertionID)\"", with: "ID=\"_second\"")
        #expect(Fixtures.code(xml.replacingFirst("</samlp:Response>", with: second + "</samlp:Response>")) == .assertionCount)
        #expect(Fixtures.code(xml.removingFirst(xml.assertionElement)) == .assertionCount)
    }

    @Test func encryptedAssertion() {
        let xml = Fixtures.issue(.response)
        let encrypted = "<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\"/></saml:EncryptedAssertion>"
        #expect(Fixtures.code(xml.replacingFirst(xml.assertionElement, with: encrypted)) == .unsupportedEncryptedAssertion)
    }

    @Test func malformed() {
        let xml = Fixtures.issue(.assertion)
        #expect(Fixtures.code(String(xml.prefix(xml.count / 2))) == .malformedXML)
        #expect(Fixtures.code("") == .malformedXML)
        #expect(Fixtures.code("<notSAML/>") == .malformedXML)
    }

    @Test func errorClassification() {
        #expect(VerificationError.Code.signatureInvalid.rawValue == "signature_invalid")
        #expect(VerificationError(.keyNotTrusted, "").isTrustFailure)
        #expect(!VerificationError(.forbiddenDTD, "").isTrustFailure)
        #expect(!VerificationError(.internalError, "").isTrustFailure)
        // Equal when the codes are: the message is for people.
        #expect(VerificationError(.expired, "one wording") == VerificationError(.expired, "another"))
        #expect(VerificationError(.expired, "same") != VerificationError(.notYetValid, "same"))
    }
}
