import ArgumentParser
import Foundation
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

    func validate() throws {
        for attribute in attributes where SAMLAttribute(argument: attribute) == nil {
            throw ValidationError("--attr '\(attribute)' is not name=value")
        }
        if ttl <= 0 { throw ValidationError("--ttl must be positive") }
    }

    func run() throws {
        var options = IssueOptions(mvpd: mvpd, user: user, sign: sign)
        options.attributes = Self.merge(attributes.compactMap(SAMLAttribute.init(argument:)))
        options.ttl = ttl
        options.pretty = pretty
        if let issuer { options.issuer = issuer }
        do {
            let xml = try TestIdP.issue(keyPath: key, certificatePath: cert, options: options)
            var text = String(decoding: xml, as: UTF8.self)
            if !text.hasSuffix("\n") { text += "\n" }
            StandardStreams.write(text)
        } catch {
            StandardStreams.reportFailure(input: key, code: "issue_failed", message: "\(error)")
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
