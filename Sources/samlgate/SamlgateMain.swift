import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

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
