import ArgumentParser
import TestIdP

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

    func run() throws {
        do {
            let pair = try IdPKeyPair.generate(alg)
            let paths = try pair.write(to: out)
            StandardStreams.write("\(paths.key)\n\(paths.certificate)\n")
        } catch {
            StandardStreams.reportFailure(input: out, code: "keygen_failed", message: "\(error)")
            throw ExitCode.failure
        }
    }
}

extension KeyAlgorithm: ExpressibleByArgument {}
