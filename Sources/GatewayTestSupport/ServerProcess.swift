// samlgate's server commands run as processes of their own, and reading what they write.

import AsyncHTTPClient
import CLITestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A samlgate server command (`serve`, `upstream`) as a process of its own, and its JSON answers:
/// for the tests of the executable rather than of the modules in this process.
package enum ServerProcess {
    /// Starts `samlgate serve` (or another server `command`) with `arguments`, waits for its
    /// "listening on" line, returns the process, URL, that line and the output pipe (hold it
    /// while the process runs). `pinnedTo`: the CPU list `taskset` pins it to (it execs samlgate,
    /// so the process is samlgate's). `unprivileged`: run as `nobody` when the tests run as root
    /// (through `setpriv`, which execs it too).
    package static func start(
        _ arguments: [String], command: String = "serve", pinnedTo cpus: String? = nil, unprivileged: Bool = false
    ) throws -> (
        Process, String, String, Pipe
    ) {
        var launcher: [String] = []
        if let cpus { launcher += ["/usr/bin/taskset", "-c", cpus] }
        // As the container images run it: no root, no capabilities (uid and gid of `nobody`).
        if unprivileged && getuid() == 0 { launcher += ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] }
        let process = Process()
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = launcher.dropFirst() + [SamlgateProcess.executable.path, command] + arguments
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
        let scheme = listening.hasPrefix("https://") || listening.contains("listening on https://") ? "https" : "http"
        guard let range = listening.range(of: "\(scheme)://127.0.0.1:"),
            let port = Int(listening[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSDebugDescriptionErrorKey: "no listening line: \(text)"])
        }
        return (process, "\(scheme)://127.0.0.1:\(port)", text, output)
    }

    package static func get(_ url: String) async throws -> (Int, [String: Any]) {
        let response = try await GatewayHarness.client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }
}

// MARK: - Both streams captured

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

// MARK: - JSON log lines

/// What `--log-format json` writes: one JSON object per line.
package enum JSONLogLines {
    /// Parses every line of `text` as a log object; records an issue for any that is not.
    package static func objects(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON line: \(line)", sourceLocation: sourceLocation)
            if let object {
                for key in ["ts", "level", "label", "msg"] {
                    #expect(object[key] is String, "\(key) missing: \(line)", sourceLocation: sourceLocation)
                }
            }
            return object
        }
    }
}
