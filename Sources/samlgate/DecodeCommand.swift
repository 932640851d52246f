import ArgumentParser
import NIOCore
import SAMLEncoding

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
