import Foundation

/// The SAML 2.0 metadata of a test identity provider: one `md:EntityDescriptor` with an
/// `IDPSSODescriptor` whose `KeyDescriptor`s carry the certificates, as an MVPD publishes it.
/// What `samlgate idp metadata` prints, and what a metadata trust store is built from.
public struct IdPMetadata: Sendable {
    /// The `entityID`: the Issuer the IdP's responses carry.
    public var entityID: String
    /// PEM certificates published for signing (`use="signing"`); several during a rotation.
    public var signingCertificates: [String]
    /// PEM certificates published for encryption only (`use="encryption"`): never trusted for
    /// signatures, here so tests can show it.
    public var encryptionCertificates: [String] = []
    /// PEM certificates published without `use` (valid for both).
    public var unspecifiedCertificates: [String] = []
    /// `validUntil` on the `EntityDescriptor`, if any.
    public var validUntil: Date?
    /// The `ID` of the `EntityDescriptor` (what a signature references); signing sets one.
    public var id: String?
    /// `creationInstant` of an `mdrpi:PublicationInfo` in the `EntityDescriptor`'s
    /// `md:Extensions`, if any: when the publisher says it published the document.
    public var creationInstant: Date?

    public init(entityID: String, signingCertificates: [String], validUntil: Date? = nil) {
        self.entityID = entityID
        self.signingCertificates = signingCertificates
        self.validUntil = validUntil
    }

    /// The entity id ``TestIdentityProvider`` issues as for `mvpd` unless told otherwise.
    public static func defaultEntityID(mvpd: String) -> String {
        "https://idp.\(mvpd.lowercased()).example.com/saml2/idp"
    }

    static let metadataNS = "urn:oasis:names:tc:SAML:2.0:metadata"
    static let dsigNS = "http://www.w3.org/2000/09/xmldsig#"

    /// The document, with an XML declaration, indented.
    public func render() -> String {
        render(signatureTemplate: nil)
    }

    /// The document with an enveloped signature on the `EntityDescriptor` by `signer` (the
    /// IdP's own key or a federation's), as an MVPD that signs its metadata publishes it.
    public func render(signedBy signer: TestIdentityProvider) throws(TestIdPError) -> String {
        var signed = self
        let id = signed.id ?? "_metadata"
        signed.id = id
        let text = signed.render(signatureTemplate: signer.signatureTemplate(referenceID: id, level: 1))
        return String(decoding: try signer.signEnveloped(text), as: UTF8.self)
    }

    private func render(signatureTemplate: String?) -> String {
        var w = XMLWriter(pretty: true)
        w.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        w.raw(descriptor(level: 0, namespaces: true, signatureTemplate: signatureTemplate))
        return w.text
    }

    /// The `md:EntityDescriptor` element alone (for an aggregate), indented from `level`.
    public func descriptor(level: Int, namespaces: Bool) -> String {
        descriptor(level: level, namespaces: namespaces, signatureTemplate: nil)
    }

    private func descriptor(level: Int, namespaces: Bool, signatureTemplate: String?) -> String {
        var w = XMLWriter(pretty: true, level: level)
        var attributes: [(String, String)] = namespaces ? [("xmlns:md", Self.metadataNS), ("xmlns:ds", Self.dsigNS)] : []
        if let id { attributes.append(("ID", id)) }
        attributes.append(("entityID", entityID))
        if let validUntil { attributes.append(("validUntil", SAMLTimestamp.format(validUntil))) }
        w.open("md:EntityDescriptor", attributes)
        // The signature comes first (the metadata schema's order).
        if let signatureTemplate { w.raw(signatureTemplate + "\n") }
        if let creationInstant {
            w.open("md:Extensions")
            w.empty(
                "mdrpi:PublicationInfo",
                [
                    ("xmlns:mdrpi", "urn:oasis:names:tc:SAML:metadata:rpi"), ("publisher", entityID),
                    ("creationInstant", SAMLTimestamp.format(creationInstant)),
                ])
            w.close("md:Extensions")
        }
        w.open("md:IDPSSODescriptor", [("protocolSupportEnumeration", "urn:oasis:names:tc:SAML:2.0:protocol")])
        for (use, certificates) in [("signing", signingCertificates), ("encryption", encryptionCertificates), ("", unspecifiedCertificates)] {
            for certificate in certificates {
                w.open("md:KeyDescriptor", use.isEmpty ? [] : [("use", use)])
                w.open("ds:KeyInfo")
                w.open("ds:X509Data")
                w.leaf("ds:X509Certificate", Self.base64(certificate))
                w.close("ds:X509Data")
                w.close("ds:KeyInfo")
                w.close("md:KeyDescriptor")
            }
        }
        w.leaf("md:NameIDFormat", "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")
        let endpoint = entityID.hasSuffix("/") ? entityID + "sso" : entityID + "/sso"
        w.empty("md:SingleSignOnService", [("Binding", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"), ("Location", endpoint)])
        w.close("md:IDPSSODescriptor")
        w.close("md:EntityDescriptor")
        return w.text
    }

    /// An aggregate (`md:EntitiesDescriptor`) of several entities.
    public static func aggregate(_ entities: [IdPMetadata], name: String = "samlgate test federation", validUntil: Date? = nil) -> String {
        aggregate(entities, name: name, validUntil: validUntil, signatureTemplate: nil)
    }

    /// The aggregate with an enveloped signature on the `EntitiesDescriptor` by `signer` (a
    /// federation's key).
    public static func aggregate(
        _ entities: [IdPMetadata], name: String = "samlgate test federation", validUntil: Date? = nil,
        signedBy signer: TestIdentityProvider
    ) throws(TestIdPError) -> String {
        let text = aggregate(
            entities, name: name, validUntil: validUntil, signatureTemplate: signer.signatureTemplate(referenceID: "_aggregate", level: 1))
        return String(decoding: try signer.signEnveloped(text), as: UTF8.self)
    }

    private static func aggregate(_ entities: [IdPMetadata], name: String, validUntil: Date?, signatureTemplate: String?) -> String {
        var w = XMLWriter(pretty: true)
        w.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        var attributes = [("xmlns:md", metadataNS), ("xmlns:ds", dsigNS)]
        if signatureTemplate != nil { attributes.append(("ID", "_aggregate")) }
        attributes.append(("Name", name))
        if let validUntil { attributes.append(("validUntil", SAMLTimestamp.format(validUntil))) }
        w.open("md:EntitiesDescriptor", attributes)
        if let signatureTemplate { w.raw(signatureTemplate + "\n") }
        for entity in entities {
            w.raw(entity.descriptor(level: 1, namespaces: false))
        }
        w.close("md:EntitiesDescriptor")
        return w.text
    }

    /// The base64 body of a PEM certificate, on one line: the content of `ds:X509Certificate`.
    public static func base64Certificate(_ pem: String) -> String {
        base64(pem)
    }

    static func base64(_ pem: String) -> String {
        pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
    }
}
