import ArgumentParser

/// `samlgate idp`: a test identity provider for tests, demos and load.
struct IdPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idp",
        abstract: "A test identity provider: make keys, issue signed attribute-query responses, print its metadata.",
        subcommands: [IdPKeygenCommand.self, IdPIssueCommand.self, IdPMetadataCommand.self]
    )
}
