import ArgumentParser
import Foundation
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
