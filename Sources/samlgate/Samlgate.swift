import ArgumentParser

/// `samlgate`: the root command. Each verb lives in its own file.
struct Samlgate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samlgate",
        abstract: "SAML processing and token-exchange gateway for Apple SSO (VSA) responses.",
        subcommands: [
            ServeCommand.self, UpstreamCommand.self, EncodeCommand.self, DecodeCommand.self, VerifyCommand.self, BatchCommand.self, IdPCommand.self,
            DemoCommand.self, TrustCommand.self,
        ]
    )
}
