import CXMLSec
import Foundation

/// What the policies and the result need, read from the verified document into Swift values.
///
/// Every value is read by walking *direct children* from the Response and the one Assertion
/// located by ``ResponseStructure`` — the elements whose signatures were just verified in this
/// same parsed document — never by searching, and never from inside a `ds:Signature`.
/// Text is the full text content (comments cannot truncate it), trimmed of XML whitespace.
struct ResponseFacts: Equatable {
    struct SubjectConfirmation: Equatable {
        var method: String?
        var notBefore: Date?
        var notOnOrAfter: Date?
        var recipient: String?
        var inResponseTo: String?
    }

    var responseIssuer: String?
    var destination: String?
    var inResponseTo: String?
    var statusCode: String?
    var subStatusCode: String?

    var assertionID: String
    var assertionIssuer: String?
    var nameID: String?
    var subjectConfirmations: [SubjectConfirmation] = []
    var notBefore: Date?
    var notOnOrAfter: Date?
    /// One entry per `AudienceRestriction`, each listing its `Audience` values.
    var audienceRestrictions: [[String]] = []
    var sessionNotOnOrAfter: Date?
    var attributes: [String: [String]] = [:]

    init(structure: ResponseStructure) throws(VerificationError) {
        let response = structure.response
        let assertion = structure.assertion
        let saml = SAMLNamespace.assertionNS
        let samlp = SAMLNamespace.protocolNS

        responseIssuer = try XMLTree.uniqueChild(response, "Issuer", ns: saml).map(XMLTree.trimmedText)
        destination = XMLTree.attribute(response, "Destination")
        inResponseTo = XMLTree.attribute(response, "InResponseTo")
        if let status = try XMLTree.uniqueChild(response, "Status", ns: samlp),
            let code = try XMLTree.uniqueChild(status, "StatusCode", ns: samlp)
        {
            statusCode = XMLTree.attribute(code, "Value")
            if let sub = try XMLTree.uniqueChild(code, "StatusCode", ns: samlp) {
                subStatusCode = XMLTree.attribute(sub, "Value")
            }
        }

        assertionID = String(cString: structure.assertionID)
        assertionIssuer = try XMLTree.uniqueChild(assertion, "Issuer", ns: saml).map(XMLTree.trimmedText)
        if let subject = try XMLTree.uniqueChild(assertion, "Subject", ns: saml) {
            nameID = try XMLTree.uniqueChild(subject, "NameID", ns: saml).map(XMLTree.trimmedText)
            for confirmation in XMLTree.children(subject, "SubjectConfirmation", ns: saml) {
                var facts = SubjectConfirmation(method: XMLTree.attribute(confirmation, "Method"))
                if let data = try XMLTree.uniqueChild(confirmation, "SubjectConfirmationData", ns: saml) {
                    facts.notBefore = try Self.instant(data, "NotBefore")
                    facts.notOnOrAfter = try Self.instant(data, "NotOnOrAfter")
                    facts.recipient = XMLTree.attribute(data, "Recipient")
                    facts.inResponseTo = XMLTree.attribute(data, "InResponseTo")
                }
                subjectConfirmations.append(facts)
            }
        }
        if let conditions = try XMLTree.uniqueChild(assertion, "Conditions", ns: saml) {
            notBefore = try Self.instant(conditions, "NotBefore")
            notOnOrAfter = try Self.instant(conditions, "NotOnOrAfter")
            for restriction in XMLTree.children(conditions, "AudienceRestriction", ns: saml) {
                audienceRestrictions.append(XMLTree.children(restriction, "Audience", ns: saml).map(XMLTree.trimmedText))
            }
        }
        for statement in XMLTree.children(assertion, "AuthnStatement", ns: saml) {
            if let session = try Self.instant(statement, "SessionNotOnOrAfter") {
                sessionNotOnOrAfter = min(sessionNotOnOrAfter ?? session, session)
            }
        }
        for statement in XMLTree.children(assertion, "AttributeStatement", ns: saml) {
            for attribute in XMLTree.children(statement, "Attribute", ns: saml) {
                guard let name = XMLTree.attribute(attribute, "Name") else {
                    throw VerificationError(.malformedXML, "Attribute without Name")
                }
                let values = XMLTree.children(attribute, "AttributeValue", ns: saml).map(XMLTree.trimmedText)
                attributes[name, default: []].append(contentsOf: values)
            }
        }
    }

    private static func instant(_ node: XMLTree.Node, _ name: StaticString) throws(VerificationError) -> Date? {
        guard let text = XMLTree.attribute(node, name) else { return nil }
        guard let date = SAMLInstant.parse(text) else {
            throw VerificationError(.malformedXML, "\(name) is not an xs:dateTime")
        }
        return date
    }

    /// The Issuer that signed content vouches for: the Assertion's, or the Response's when the
    /// Response itself is signed. For an accepted response it is always the Assertion's:
    /// ``IssuerPolicy`` refuses an Assertion without one.
    func signedIssuer(responseSigned: Bool) -> String? {
        assertionIssuer ?? (responseSigned ? responseIssuer : nil)
    }

    /// The last instant (exclusive, before clock skew) at which this assertion can be accepted:
    /// the earlier of `Conditions/@NotOnOrAfter` and the latest bound among the subject
    /// confirmations (one passing confirmation is enough, so a confirmation without a bound
    /// leaves that side unbounded). `nil` means the assertion would be valid forever.
    var acceptanceBound: Date? {
        var confirmationBound: Date?
        if !subjectConfirmations.isEmpty, subjectConfirmations.allSatisfy({ $0.notOnOrAfter != nil }) {
            confirmationBound = subjectConfirmations.compactMap(\.notOnOrAfter).max()
        }
        switch (notOnOrAfter, confirmationBound) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }
}
