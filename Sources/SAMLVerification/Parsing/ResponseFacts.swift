// What is read from a verified response: the facts the policies and the result use, the
// `xs:dateTime` parser they are read with, and the unverified NameID reader for the reference
// upstream, which reads it exactly where the verifier does.

import CXMLSec
import Foundation
import SAMLEncoding

// MARK: - ResponseFacts

/// What the policies and the result need, read from the verified document into Swift values.
///
/// Every value is read by walking *direct children* from the Response and the one Assertion
/// located by ``ResponseStructure`` — the elements whose signatures were just verified in this
/// same parsed document — never by searching, and never from inside a `ds:Signature`.
/// Text is the full text content (comments cannot truncate it). The `NameID` and the
/// `AttributeValue`s are `xs:string`: read byte for byte, blanks at their ends included (a
/// value of one space is one space). The `Issuer`s and `Audience`s are entity ids, URIs whose
/// schema type collapses white space: read without the XML white space at their ends.
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
            nameID = try XMLTree.uniqueChild(subject, "NameID", ns: saml).map(XMLTree.textContent)
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
        var attributeCount = 0
        for statement in XMLTree.children(assertion, "AttributeStatement", ns: saml) {
            for _ in XMLTree.children(statement, "Attribute", ns: saml) { attributeCount += 1 }
        }
        attributes.reserveCapacity(attributeCount)
        for statement in XMLTree.children(assertion, "AttributeStatement", ns: saml) {
            for attribute in XMLTree.children(statement, "Attribute", ns: saml) {
                guard let name = XMLTree.attribute(attribute, "Name") else {
                    throw VerificationError(.malformedXML, "Attribute without Name")
                }
                // An Attribute without values is listed, with none.
                attributes[name, default: []].append(
                    contentsOf: XMLTree.children(attribute, "AttributeValue", ns: saml).lazy.map(XMLTree.textContent))
            }
        }
    }

    private static func instant(_ node: XMLTree.Node, _ name: StaticString) throws(VerificationError) -> Date? {
        guard let attribute = XMLTree.attributeNode(node, name) else { return nil }
        let date: Date?
        // The value's own bytes when it is one text node (always so without entities), no String.
        if let text = attribute.pointee.children, text.pointee.next == nil, text.pointee.type == XML_TEXT_NODE,
            let content = text.pointee.content
        {
            date = SAMLInstant.parse(trimming: UnsafeBufferPointer(start: content, count: strlen(content)))
        } else {
            date = XMLTree.attribute(node, name).flatMap(SAMLInstant.parse)
        }
        guard let date else {
            throw VerificationError(.malformedXML, "\(name) is not an xs:dateTime")
        }
        return date
    }

    /// Whether `other` says what these facts say, the XML white space at the ends of the NameID
    /// and of the attribute values aside: how a cookbook-normalized document is held to its
    /// verified original (``DocumentEquivalence`` lets the normalization change those ends, and
    /// nothing else a backend reads).
    func equalsIgnoringValueEnds(_ other: ResponseFacts) -> Bool {
        var mine = self
        var theirs = other
        mine.trimValueEnds()
        theirs.trimValueEnds()
        return mine == theirs
    }

    private mutating func trimValueEnds() {
        nameID = nameID.map(XMLTree.trimXMLWhitespace)
        attributes = attributes.mapValues { $0.map(XMLTree.trimXMLWhitespace) }
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
        for confirmation in subjectConfirmations {
            guard let bound = confirmation.notOnOrAfter else {
                confirmationBound = nil
                break
            }
            confirmationBound = max(confirmationBound ?? bound, bound)
        }
        switch (notOnOrAfter, confirmationBound) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }
}

// MARK: - SAMLInstant

/// Parses SAML `xs:dateTime` values (`2025-01-31T12:00:00Z`, optional fraction, optional
/// `Z` or `±hh:mm`; no zone means UTC as SAML requires) without Foundation's formatters,
/// which are slow and locale-dependent.
enum SAMLInstant {
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(trimming: $0) }
    }

    /// ``parse(_:)-(UnsafeBufferPointer<UInt8>)`` of `bytes` without the XML white space at their ends.
    static func parse(trimming bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0
        var end = bytes.count
        while end > start && bytes[end - 1].isXMLWhitespace { end -= 1 }
        while start < end && bytes[start].isXMLWhitespace { start += 1 }
        return parse(UnsafeBufferPointer(rebasing: bytes[start..<end]))
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                let d = Int(b[i]) - 48
                guard d >= 0 && d <= 9 else { return nil }
                value = value * 10 + d
            }
            return value
        }
        guard b.count >= 19,
            let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
            let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), b[10] == UInt8(ascii: "T"),
            let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2) else { return nil }
                offset = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
                i += 6
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

// MARK: - SubjectReader

/// Reads the `Subject/NameID` of a response *without verifying it*, for the reference upstream,
/// which stands behind a gateway that already did.
///
/// It reads the value from a parsed document exactly where the verifier does (see
/// ``ResponseStructure`` and ``ResponseFacts``): the `NameID` of the `Subject` of the one
/// `Assertion` that is a direct child of the root `Response`, as its full text content, so a
/// comment before the Assertion (`<!--<NameID>admin@victim.example<-->`) or one splitting the
/// value cannot choose the identity, as a text search would let it. Parsing is the verifier's
/// (markup limits, no network, no entities, no DOCTYPE, bytes read as UTF-8), on the calling
/// thread's parser context.
///
/// `package`: the result is unverified, so it is kept out of the public API.
package enum SubjectReader {
    /// The trimmed full text of the NameID; `nil` when the response has none. Throws when the
    /// bytes are not a response of the shape the verifier accepts.
    package static func nameID(
        _ bytes: UnsafeRawBufferPointer, options: VerificationOptions = VerificationOptions()
    ) throws(VerificationError) -> String? {
        let context = try VerificationThreadContext.current()
        return try VerificationArena.withWindow { () throws(VerificationError) in
            let document = try SecureXMLParser.parse(bytes, limits: options.markupLimits, maxDepth: options.maxDepth, context: context)
            let structure = try ResponseStructure(document: document, maxDepth: options.maxDepth)
            return try ResponseFacts(structure: structure).nameID.map(XMLTree.trimXMLWhitespace)
        }
    }
}
