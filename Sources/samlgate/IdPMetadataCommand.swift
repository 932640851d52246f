import ArgumentParser
import Foundation
import SAMLBatch
import TestIdP

/// `samlgate idp metadata`: prints the test IdP's SAML metadata, as an MVPD publishes its own,
/// so a trust store can be made of metadata files (`DIR/<mvpd>/metadata.xml`).
struct IdPMetadataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata",
        abstract: "Print the IdP's SAML metadata (EntityDescriptor with its signing certificates).",
        discussion: "Give --cert twice during a rotation: the old and the new certificate, both for signing."
    )

    @Option(help: "A signing certificate (PEM), as idp keygen writes it. Repeatable.")
    var cert: [String] = []

    @Option(help: "The MVPD id (the default entityID matches idp issue's default Issuer).")
    var mvpd: String?

    @Option(name: .customLong("entity-id"), help: "The entityID (default: derived from --mvpd).")
    var entityID: String?

    @Option(name: .customLong("valid-for"), help: "Set validUntil this many seconds from now.")
    var validFor: Double?

    @Option(name: .customLong("valid-until"), help: "Set validUntil to this instant (2027-01-31T00:00:00Z).")
    var validUntil: String?

    @Option(name: .customLong("signer-key"), help: "Sign the metadata with this private key (PEM); needs --signer-cert.")
    var signerKey: String?

    @Option(name: .customLong("signer-cert"), help: "The signer's certificate (PEM), put in the signature's KeyInfo.")
    var signerCert: String?

    func validate() throws {
        if cert.isEmpty { throw ValidationError("give at least one --cert") }
        if mvpd == nil && entityID == nil { throw ValidationError("give --mvpd or --entity-id") }
        if validFor != nil && validUntil != nil { throw ValidationError("use either --valid-for or --valid-until") }
        if (signerKey == nil) != (signerCert == nil) { throw ValidationError("--signer-key and --signer-cert go together") }
        if let validFor, validFor <= 0 { throw ValidationError("--valid-for must be positive") }
        if let validUntil, ISO8601DateFormatter().date(from: validUntil) == nil {
            throw ValidationError("--valid-until '\(validUntil)' is not an instant such as 2027-01-31T00:00:00Z")
        }
    }

    func run() throws {
        var certificates: [String] = []
        for path in cert {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                StandardStreams.reportFailure(input: path, code: .unreadableInput, message: "cannot read the file")
                throw ExitCode.failure
            }
            guard text.contains("-----BEGIN CERTIFICATE-----"), !text.contains("PRIVATE KEY-----") else {
                StandardStreams.reportFailure(
                    input: path, code: .unreadableInput, message: "not a PEM certificate (metadata publishes certificates only)")
                throw ExitCode.failure
            }
            certificates.append(text)
        }
        var until: Date?
        if let validFor { until = Date().addingTimeInterval(validFor) }
        if let validUntil { until = ISO8601DateFormatter().date(from: validUntil) }
        let metadata = IdPMetadata(
            entityID: entityID ?? IdPMetadata.defaultEntityID(mvpd: mvpd ?? ""), signingCertificates: certificates, validUntil: until)
        guard let signerKey, let signerCert else {
            StandardStreams.write(metadata.render())
            return
        }
        do {
            guard let keyPEM = try? String(contentsOfFile: signerKey, encoding: .utf8) else { throw TestIdPError("cannot read \(signerKey)") }
            guard let certPEM = try? String(contentsOfFile: signerCert, encoding: .utf8) else { throw TestIdPError("cannot read \(signerCert)") }
            let signer = try TestIdentityProvider(privateKeyPEM: keyPEM, certificatePEM: certPEM)
            StandardStreams.write(try metadata.render(signedBy: signer))
        } catch {
            StandardStreams.reportFailure(input: signerKey, code: .issueFailed, message: "\(error)")
            throw ExitCode.failure
        }
    }
}
