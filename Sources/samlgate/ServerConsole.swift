import Logging
import ServerSupport

/// The lines `serve` and `upstream` write themselves rather than through swift-log: the start-up
/// line (standard output, where supervisors and tests read the port) and the error that ends
/// the process (standard error), including configuration errors found before the logger exists.
///
/// In the json log format they are objects shaped like the log lines (`ts`, `level`, `label`,
/// `msg`, then fields), so a collector parsing every line of a json-format server never meets
/// plain text; in the text format they are the plain lines. Usage errors that ArgumentParser
/// reports (an unknown flag) come before any format is known and stay plain.
struct ServerConsole {
    /// The json log format (otherwise text).
    let json: Bool
    /// The server's swift-log label (`samlgate.gateway`, `samlgate.upstream`).
    let label: String
    /// What starts a plain-text error line (`samlgate: serve`, `samlgate upstream`).
    let command: String

    /// The start-up line: `text`, or a `notice` object with message `listening` and `fields`.
    func listening(_ text: String, fields: Logger.Metadata) {
        if json {
            JSONLogHandler.write(JSONLogHandler.line(label: label, level: .notice, message: "listening", metadata: fields), to: 1)
        } else {
            StandardStreams.write(text + "\n")
        }
    }

    /// The error that ends the process: `<command>: <message>` (escaped: it may quote a Redis or
    /// upstream error text), or a `critical` object.
    func fail(_ message: String) {
        if json {
            JSONLogHandler.write(JSONLogHandler.line(label: label, level: .critical, message: message, metadata: [:]), to: 2)
        } else {
            StandardStreams.writeError("\(command): \(DisplayText.escape(message))\n")
        }
    }
}
