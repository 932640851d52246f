import ArgumentParser

/// `samlgate trust`: what a trust store trusts.
struct TrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Inspect a trust store (PEM files, SAML metadata).",
        subcommands: [TrustListCommand.self]
    )
}
