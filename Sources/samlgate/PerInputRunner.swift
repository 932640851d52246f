import ArgumentParser
import NIOCore
import SAMLEncoding
import ServerSupport

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
