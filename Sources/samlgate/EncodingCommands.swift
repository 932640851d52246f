import ArgumentParser
import NIOCore
import SAMLEncoding
import ServerSupport

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

// MARK: - decode

/// `samlgate decode`: percent-decode then base64-decode each input and print the XML.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode cookbook-encoded (or plain base64) SAML responses back to XML.",
        discussion: """
            Each FILE (or standard input) holds one encoded value; surrounding ASCII whitespace \
            is ignored. The decoded bytes are printed followed by one newline. Errors are reported \
            as 'samlgate: <file>: <code>: <message>' (malformed_percent_encoding, malformed_base64) \
            and the exit status is 1.
            """
    )

    @Argument(help: "Input files; '-' or none for standard input.")
    var files: [String] = []

    func run() throws {
        try PerInputRunner.run(files) { input, output throws(SAMLEncodingError) in
            input.trimASCIIWhitespace()
            try input.withUnsafeReadableBytes { bytes throws(SAMLEncodingError) in
                try CookbookDecoder.decode(bytes, into: &output)
            }
        }
    }
}

// MARK: - The loop over inputs

/// The loop every byte-transforming verb shares: read each input (standard input when none),
/// transform it into one output line, and report a bad input as
/// `samlgate: <file>: <code>: <message>` without stopping; exit status 1 if any failed.
enum PerInputRunner {
    static func run(
        _ files: [String],
        _ transform: (inout ByteBuffer, inout ByteBuffer) throws(SAMLEncodingError) -> Void
    ) throws {
        var failed = false
        var output = ByteBuffer()
        for path in RawArguments.paths(files.isEmpty ? [InputReader.standardInputName] : files) {
            output.clear()
            // Printed names are escaped: a name may hold a line break or bytes that are not UTF-8.
            let name = path.description
            do {
                var input = try InputReader.read(path)
                try transform(&input, &output)
                output.writeInteger(UInt8(ascii: "\n"))
                StandardStreams.write(output)
            } catch let error as InputReader.Failure {
                failed = true
                StandardStreams.reportFailure(input: name, code: error.code, message: error.message)
            } catch let error as SAMLEncodingError {
                failed = true
                StandardStreams.reportFailure(input: name, code: error.code, message: error.message)
            }
        }
        if failed { throw ExitCode.failure }
    }
}
