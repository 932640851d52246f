import ArgumentParser
import NIOCore
import SAMLEncoding

/// `samlgate encode`: the cookbook encoding of each input, one line per input.
struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode raw SAML responses exactly as the backend's cookbook does.",
        discussion: """
            Each FILE (or standard input when none is given, or for '-') is one raw response. \
            The result is printed on its own line: exactly the cookbook's bytes followed by one newline. \
            A bad input is reported on standard error as 'samlgate: <file>: <code>: <message>'; \
            the other inputs are still processed and the exit status is 1.
            """
    )

    @Option(help: "How far to go: normalized, base64 or encoded.")
    var stage: CookbookStage = .encoded

    @Flag(help: "Accept base64 or already-encoded values as well as raw XML, and encode each exactly once (only with --stage encoded).")
    var detect = false

    @Argument(help: "Input files; '-' or none for standard input.")
    var files: [String] = []

    func validate() throws {
        if detect && stage != .encoded {
            throw ValidationError("--detect works only with --stage encoded")
        }
    }

    func run() throws {
        try PerInputRunner.run(files) { input, output throws(SAMLEncodingError) in
            try input.withUnsafeReadableBytes { bytes throws(SAMLEncodingError) in
                if detect {
                    try CookbookEncoder.encodeAnyForm(bytes, into: &output)
                } else {
                    try CookbookEncoder.encode(bytes, stage: stage, into: &output)
                }
            }
        }
    }
}

extension CookbookStage: ExpressibleByArgument {}
