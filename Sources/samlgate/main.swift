import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

// The entry point maps ArgumentParser's outcomes onto samlgate's exit statuses:
// 0 success, 1 some input failed, 2 usage error.
await SamlgateMain.run()

// MARK: - The root command

/// `samlgate`: the root command. Each verb has a file of its own, with its sub-verbs (`encode` and
/// `decode` share EncodingCommands.swift).
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

// MARK: - Exit statuses

/// Runs the root command with samlgate's exit-status contract: usage errors exit with 2
/// (ArgumentParser's default is 64), failures of individual inputs with 1.
enum SamlgateMain {
    static func run() async {
        do {
            var command = try Samlgate.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = Samlgate.exitCode(for: error)
            if code == .validationFailure {
                StandardStreams.writeError(Samlgate.fullMessage(for: error) + "\n")
                exit(2)
            }
            Samlgate.exit(withError: error)
        }
    }
}
