import CXMLSec
import Foundation

// MARK: - MetadataReader

/// Reads SAML 2.0 metadata (an `EntityDescriptor`, or an `EntitiesDescriptor` aggregate) with
/// the verifier's hardened parser: no DOCTYPE (so no entities, no external fetches), markup
/// limits checked by a byte scan before libxml2 runs, a depth limit, and a size limit checked
/// on the bytes read (never more than the limit and one). Metadata comes from outside (an MVPD, a federation), so it is
/// parsed as the untrusted input it is.
///
/// Like the verifier, navigation goes through direct children only: a certificate counts when
/// it sits at `EntityDescriptor/<role>/KeyDescriptor/ds:KeyInfo/ds:X509Data/ds:X509Certificate`,
/// never because it appears somewhere below.
enum MetadataReader {
    /// The largest `DIR/<mvpd>/metadata.xml` (one entity: a few kilobytes in practice).
    static let entityFileLimit = 1 << 20
    /// The largest aggregate `DIR/metadata.xml` (federation aggregates run to tens of MiB).
    static let aggregateFileLimit = 64 << 20
    /// `EntitiesDescriptor`s nest; real aggregates use one or two levels.
    static let maxDepth = 64

    /// The entities of the file at `path` (named `label` in errors), at most `limit` bytes; when
    /// `signers` is given, only after its signature verified with one of them.
    ///
    /// The limit is checked on what is read, at most `limit + 1` bytes through an open handle:
    /// a symbolic link's own size, or a size read before opening, says nothing of the file the
    /// link points to (or of a device or pipe there).
    static func read(path: String, label: String, limit: Int, signers: [TrustedKey]? = nil) throws(TrustStoreError) -> [MetadataEntity] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw TrustStoreError("cannot read \(label)") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw TrustStoreError("cannot read \(label)")
        }
        guard data.count <= limit else {
            throw TrustStoreError(.metadataMalformed, "\(label): larger than the \(limit)-byte metadata limit")
        }
        return try entities(Array(data), label: label, signers: signers)
    }

    /// The entities of one metadata document.
    static func entities(_ bytes: [UInt8], label: String, signers: [TrustedKey]? = nil) throws(TrustStoreError) -> [MetadataEntity] {
        try document(bytes, label: label, signers: signers).entities
    }

    /// The entities of one metadata document and the `creationInstant` of the
    /// `mdrpi:PublicationInfo` in its root's `md:Extensions`, if it has one that is a date.
    static func document(
        _ bytes: [UInt8], label: String, signers: [TrustedKey]? = nil
    ) throws(TrustStoreError) -> (entities: [MetadataEntity], creationInstant: Date?) {
        let result: Result<([MetadataEntity], Date?), TrustStoreError> = bytes.withUnsafeBytes { buffer in
            do throws(TrustStoreError) {
                return .success(try document(buffer, label: label, signers: signers))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func document(
        _ buffer: UnsafeRawBufferPointer, label: String, signers: [TrustedKey]?
    ) throws(TrustStoreError) -> ([MetadataEntity], Date?) {
        func failure(_ code: TrustStoreError.Code, _ error: VerificationError) -> TrustStoreError {
            TrustStoreError(code, "\(label): \(error.code.rawValue): \(error.message)")
        }
        let context: VerificationThreadContext
        do throws(VerificationError) {
            context = try VerificationThreadContext.current()
        } catch {
            throw failure(.metadataMalformed, error)
        }
        let document: ParsedDocument
        do throws(VerificationError) {
            document = try SecureXMLParser.parse(buffer, limits: MarkupLimits(), maxDepth: maxDepth, context: context)
        } catch {
            throw failure(.metadataMalformed, error)
        }
        guard let root = document.root else { throw TrustStoreError(.metadataMalformed, "\(label): no root element") }
        if let signers {
            do throws(VerificationError) {
                try MetadataSignature.verify(document, root: root, signers: signers, context: context)
            } catch {
                throw failure(.metadataSignatureInvalid, error)
            }
        }
        do throws(VerificationError) {
            return (try entities(root), creationInstant(root))
        } catch {
            throw failure(.metadataMalformed, error)
        }
    }

    /// The namespace of `mdrpi:PublicationInfo` (SAML V2.0 Metadata Extensions for Registration
    /// and Publication Information).
    static let publicationInfoNS: StaticString = "urn:oasis:names:tc:SAML:metadata:rpi"

    /// The publisher's `creationInstant` (`md:Extensions/mdrpi:PublicationInfo` on the root, the
    /// signed element). Optional and informative, so one that is absent, repeated or not a date
    /// is no reason to refuse the document: it is just not there.
    private static func creationInstant(_ root: XMLTree.Node) -> Date? {
        let extensions = Array(XMLTree.children(root, "Extensions", ns: SAMLNamespace.metadataNS))
        guard extensions.count == 1 else { return nil }
        let infos = Array(XMLTree.children(extensions[0], "PublicationInfo", ns: publicationInfoNS))
        guard infos.count == 1, let text = XMLTree.attribute(infos[0], "creationInstant") else { return nil }
        return SAMLInstant.parse(text)
    }

    private static func entities(_ root: XMLTree.Node) throws(VerificationError) -> [MetadataEntity] {
        var found: [MetadataEntity] = []
        if XMLTree.isElement(root, "EntityDescriptor", ns: SAMLNamespace.metadataNS) {
            found.append(try entity(root, inherited: nil))
        } else if XMLTree.isElement(root, "EntitiesDescriptor", ns: SAMLNamespace.metadataNS) {
            try collect(root, inherited: nil, into: &found)
        } else {
            throw VerificationError(.malformedXML, "the root is not an md:EntityDescriptor or md:EntitiesDescriptor")
        }
        return found
    }

    private static func collect(_ node: XMLTree.Node, inherited: Date?, into found: inout [MetadataEntity]) throws(VerificationError) {
        let until = try earliest(inherited, node)
        for child in XMLTree.childElements(node) {
            if XMLTree.isElement(child, "EntityDescriptor", ns: SAMLNamespace.metadataNS) {
                found.append(try entity(child, inherited: until))
            } else if XMLTree.isElement(child, "EntitiesDescriptor", ns: SAMLNamespace.metadataNS) {
                try collect(child, inherited: until, into: &found)
            }
        }
    }

    private static func entity(_ node: XMLTree.Node, inherited: Date?) throws(VerificationError) -> MetadataEntity {
        guard let entityID = XMLTree.attribute(node, "entityID").map(XMLTree.trimXMLWhitespace), !entityID.isEmpty else {
            throw VerificationError(.malformedXML, "an EntityDescriptor has no entityID")
        }
        var until = try earliest(inherited, node)
        var certificates: [String] = []
        for role in XMLTree.childElements(node)
        where XMLTree.isElement(role, "IDPSSODescriptor", ns: SAMLNamespace.metadataNS)
            || XMLTree.isElement(role, "AttributeAuthorityDescriptor", ns: SAMLNamespace.metadataNS)
        {
            until = try earliest(until, role)
            for descriptor in XMLTree.children(role, "KeyDescriptor", ns: SAMLNamespace.metadataNS) {
                if let use = XMLTree.attribute(descriptor, "use"), use != "signing" { continue }
                guard let keyInfo = try XMLTree.uniqueChild(descriptor, "KeyInfo", ns: SAMLNamespace.dsigNS) else { continue }
                for data in XMLTree.children(keyInfo, "X509Data", ns: SAMLNamespace.dsigNS) {
                    for certificate in XMLTree.children(data, "X509Certificate", ns: SAMLNamespace.dsigNS) {
                        let base64 = String(XMLTree.textContent(certificate).unicodeScalars.filter { !$0.properties.isWhitespace })
                        guard !base64.isEmpty, Data(base64Encoded: base64) != nil else {
                            throw VerificationError(.malformedXML, "entity \(entityID): an X509Certificate is not base64")
                        }
                        if !certificates.contains(base64) { certificates.append(base64) }
                    }
                }
            }
        }
        return MetadataEntity(entityID: entityID, validUntil: until, signingCertificates: certificates)
    }

    /// The earlier of `date` and the `validUntil` of `node`.
    private static func earliest(_ date: Date?, _ node: XMLTree.Node) throws(VerificationError) -> Date? {
        guard let text = XMLTree.attribute(node, "validUntil") else { return date }
        guard let own = SAMLInstant.parse(text) else {
            throw VerificationError(.malformedXML, "validUntil is not an xs:dateTime")
        }
        guard let date else { return own }
        return min(date, own)
    }
}

// MARK: - MetadataEntity

/// What the trust store takes from one `md:EntityDescriptor`: its `entityID` (the Issuer its
/// responses carry), the certificates it signs with, and how long the metadata may be used.
///
/// Only the identity-provider roles (`IDPSSODescriptor`, `AttributeAuthorityDescriptor`) are
/// read, and of their `KeyDescriptor`s only those for signing (`use="signing"` or no `use`):
/// an encryption key never verifies a response.
package struct MetadataEntity: Sendable, Equatable {
    package let entityID: String
    /// The earliest `validUntil` of the entity, its roles and the `EntitiesDescriptor`s around it.
    package let validUntil: Date?
    /// Base64 DER of each signing certificate, in document order, without repeats.
    package let signingCertificates: [String]

    package init(entityID: String, validUntil: Date?, signingCertificates: [String]) {
        self.entityID = entityID
        self.validUntil = validUntil
        self.signingCertificates = signingCertificates
    }

    /// A certificate of ``signingCertificates`` as the PEM ``TrustedKey`` loads.
    static func pem(_ base64: String) -> String {
        var lines: [Substring] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
    }
}

// MARK: - MetadataSignature

/// Checks the enveloped signature of a metadata document against pinned signer keys, with the
/// verifier's own machinery and defences: every `ID` registered by us with duplicates refused,
/// exactly one `ds:Signature` as a direct child of the root, whose single reference is `#` +
/// the root's ID and resolves to the root itself, the algorithm allow-list (no SHA-1), the
/// `SignedInfo` precheck, and only the pinned keys — `KeyInfo` is never read.
///
/// The signature covers the root, so every entity, role and certificate read afterwards
/// (direct children only) is signed content.
enum MetadataSignature {
    static func verify(
        _ document: borrowing ParsedDocument, root: XMLTree.Node, signers: [TrustedKey],
        context: VerificationThreadContext
    ) throws(VerificationError) {
        var rootID: UnsafePointer<xmlChar>?
        try register(root, document.doc, depth: 1, rootID: &rootID)
        guard let rootID else {
            throw VerificationError(.signatureMissing, "the signed metadata's root has no ID to reference")
        }
        guard let signature = try ResponseStructure.signature(of: root) else {
            throw VerificationError(.signatureMissing, "the metadata is not signed (no ds:Signature on its root)")
        }
        let options = VerificationOptions()
        _ = try SignatureVerifier.verify(
            signature: signature, owner: root, ownerID: rootID, document: document, keys: signers,
            algorithms: AlgorithmPolicy(allowSHA1: false, nativeCanonicalization: options.nativeCanonicalization), context: context)
    }

    /// Registers the IDs of `node` and every element below it. Depth is bounded by the parse
    /// (``MetadataReader/maxDepth``), so the recursion is too.
    private static func register(
        _ node: XMLTree.Node, _ doc: UnsafeMutablePointer<xmlDoc>, depth: Int,
        rootID: inout UnsafePointer<xmlChar>?
    ) throws(VerificationError) {
        let id = try IDAttribute.register(node, in: doc)
        if depth == 1 { rootID = id }
        var child = try IDAttribute.nextElement(from: node.pointee.children)
        while let current = child {
            try register(current, doc, depth: depth + 1, rootID: &rootID)
            child = try IDAttribute.nextElement(from: current.pointee.next)
        }
    }
}
