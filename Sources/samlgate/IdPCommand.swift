import ArgumentParser
import Foundation
import NIOCore
import SAMLBatch
import SAMLEncoding
import TestIdP

/// `samlgate idp`: a test identity provider for tests, demos and load.
struct IdPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idp",
        abstract: "A test identity provider: make keys, issue signed attribute-query responses, print its metadata.",
        subcommands: [IdPKeygenCommand.self, IdPIssueCommand.self, IdPMetadataCommand.self]
    )
}

// MARK: - idp keygen

/// `samlgate idp keygen`: a private key and a self-signed certificate for a test IdP.
struct IdPKeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write key.pem (mode 0600) and cert.pem (self-signed) into a directory."
    )

    @Option(help: "Directory to write into (created when missing).")
    var out: String

    @Option(help: "Key algorithm: rsa2048 or p256.")
    var alg: KeyAlgorithm = .rsa2048

    @Option(name: .customLong("valid-days"), help: "Days the certificate is valid.")
    var validDays: Int = 3650

    func validate() throws {
        if validDays < 1 { throw ValidationError("--valid-days must be at least 1") }
    }

    func run() throws {
        do {
            let pair = try IdPKeyPair.generate(alg, validity: TimeInterval(validDays) * 86_400)
            let paths = try pair.write(to: out)
            StandardStreams.write("\(paths.key)\n\(paths.certificate)\n")
        } catch {
            StandardStreams.reportFailure(input: out, code: .keygenFailed, message: "\(error)")
            throw ExitCode.failure
        }
    }
}

extension KeyAlgorithm: ExpressibleByArgument {}

// MARK: - idp issue

/// `samlgate idp issue`: prints one freshly signed `samlp:Response`.
struct IdPIssueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Print a signed SAML attribute-query response (Issuer, Success, one Assertion).",
        discussion: "The audience is https://saml.sp.auth.adobe.com; ids are random, so each response is unique."
    )

    @Option(help: "The IdP's private key (PEM).")
    var key: String

    @Option(help: "The IdP's certificate (PEM), embedded in KeyInfo.")
    var cert: String

    @Option(help: "The MVPD id (also the default Issuer's host part).")
    var mvpd: String

    @Option(help: "The user's NameID.")
    var user: String

    @Option(name: .customLong("attr"), help: "An attribute as name=value. Repeatable; repeat a name for several values.")
    var attributes: [String] = []

    @Option(help: "What to sign: response, assertion or both.")
    var sign: SignTarget = .assertion

    @Option(help: "Validity in seconds from now.")
    var ttl: Double = 300

    @Option(help: "The Issuer (default: derived from the MVPD id).")
    var issuer: String?

    @Flag(help: "Indent the XML with line breaks (exercises the cookbook's normalization).")
    var pretty = false

    @Option(help: "How many responses to print, one per line (each with fresh ids; for load tests).")
    var count = 1

    @Option(name: .customLong("pad-to"), help: "Pad each response with an attribute to about this many bytes.")
    var padTo: Int?

    @Flag(help: "Print the cookbook-encoded value instead of the XML (ready for a form body).")
    var encoded = false

    func validate() throws {
        for attribute in attributes where SAMLAttribute(argument: attribute) == nil {
            throw ValidationError("--attr '\(attribute)' is not name=value")
        }
        if ttl <= 0 { throw ValidationError("--ttl must be positive") }
        if count < 1 { throw ValidationError("--count must be at least 1") }
        if pretty && count > 1 { throw ValidationError("--pretty prints several lines per response; it cannot be combined with --count") }
    }

    func run() throws {
        var options = IssueOptions(mvpd: mvpd, user: user, sign: sign)
        options.attributes = Self.merge(attributes.compactMap(SAMLAttribute.init(argument:)))
        options.ttl = ttl
        options.pretty = pretty
        if let issuer { options.issuer = issuer }
        options.padToSize = padTo
        do {
            guard let keyPEM = try? String(contentsOfFile: key, encoding: .utf8) else { throw TestIdPError("cannot read \(key)") }
            guard let certPEM = try? String(contentsOfFile: cert, encoding: .utf8) else { throw TestIdPError("cannot read \(cert)") }
            let idp = try TestIdentityProvider(privateKeyPEM: keyPEM, certificatePEM: certPEM)
            for _ in 0..<count {
                let xml = try idp.issue(options)
                var out = ByteBuffer()
                if encoded {
                    try xml.withUnsafeBytes { try CookbookEncoder.encode($0, into: &out) }
                } else {
                    out.writeBytes(xml)
                }
                if out.readableBytesView.last != UInt8(ascii: "\n") { out.writeInteger(UInt8(ascii: "\n")) }
                StandardStreams.write(out)
            }
        } catch {
            StandardStreams.reportFailure(input: key, code: .issueFailed, message: "\(error)")
            throw ExitCode.failure
        }
    }

    /// `--attr a=1 --attr a=2` becomes one attribute with two values, in first-seen order.
    static func merge(_ attributes: [SAMLAttribute]) -> [SAMLAttribute] {
        var merged: [SAMLAttribute] = []
        for attribute in attributes {
            if let i = merged.firstIndex(where: { $0.name == attribute.name }) {
                merged[i].values += attribute.values
            } else {
                merged.append(attribute)
            }
        }
        return merged
    }
}

extension SignTarget: ExpressibleByArgument {}

// MARK: - idp metadata

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
