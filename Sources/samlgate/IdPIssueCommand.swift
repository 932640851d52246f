import ArgumentParser
import Foundation
import NIOCore
import SAMLEncoding
import TestIdP

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
