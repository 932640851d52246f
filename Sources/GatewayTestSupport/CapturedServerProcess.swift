import CLITestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A running server process with both streams captured.
package final class CapturedServerProcess {
    package let process = Process()
    package let output = Pipe()
    package let errors = Pipe()
    package var firstLine = ""

    package init(_ arguments: [String]) throws {
        process.executableURL = SamlgateProcess.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        firstLine = SamlgateProcess.firstLine(of: output.fileHandleForReading)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    package var url: String? {
        let object = (try? JSONSerialization.jsonObject(with: Data(firstLine.utf8))) as? [String: Any]
        return object?["url"] as? String
    }

    /// Stops with SIGTERM and returns everything written on both streams.
    package func finish() -> (stdout: String, stderr: String, status: Int32) {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = errors.fileHandleForReading.readDataToEndOfFile()
        return (firstLine + String(decoding: rest, as: UTF8.self), String(decoding: errorText, as: UTF8.self), process.terminationStatus)
    }
}
