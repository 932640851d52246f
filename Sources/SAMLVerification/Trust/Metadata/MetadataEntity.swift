import Foundation

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
