import AsyncHTTPClient
import CLITestSupport
import Foundation

/// A samlgate server command (`serve`, `upstream`) as a process of its own, and its JSON answers:
/// for the tests of the executable rather than of the modules in this process.
package enum ServerProcess {
    /// Starts `samlgate serve` (or another server `command`) with `arguments`, waits for its
    /// "listening on" line, returns the process, URL, that line and the output pipe (hold it
    /// while the process runs). `pinnedTo`: the CPU list `taskset` pins it to (it execs samlgate,
    /// so the process is samlgate's).
    package static func start(
        _ arguments: [String], command: String = "serve", pinnedTo cpus: String? = nil
    ) throws -> (
        Process, String, String, Pipe
    ) {
        let process = Process()
        if let cpus {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", cpus, SamlgateProcess.executable.path, command] + arguments
        } else {
            process.executableURL = SamlgateProcess.executable
            process.arguments = [command] + arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = SamlgateProcess.firstLine(of: output.fileHandleForReading)
        // The json log format's start-up line has the listening URL in `url` (the upstreams'
        // URLs are fields too); the text one starts with it.
        let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        let listening = json?["url"] as? String ?? text
        guard let range = listening.range(of: "http://127.0.0.1:"),
            let port = Int(listening[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSDebugDescriptionErrorKey: "no listening line: \(text)"])
        }
        return (process, "http://127.0.0.1:\(port)", text, output)
    }

    package static func get(_ url: String) async throws -> (Int, [String: Any]) {
        let response = try await GatewayHarness.client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }
}
