import Foundation

/// Runs the real `samlgate` executable that SwiftPM built next to the test bundle (test-only
/// support shared by the test targets; not part of any product).
package struct SamlgateProcess: Sendable {
    package var status: Int32
    package var stdout: Data
    package var stderr: String

    package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    package static var executable: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("samlgate")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        fatalError("samlgate executable not found next to the test bundle (\(candidates))")
    }

    /// - Parameter timeout: seconds after which a process still running is terminated (SIGTERM),
    ///   so a command that should have exited at once makes its test fail instead of hang.
    /// - Parameter directory: the working directory (default: the test's own).
    /// - Parameter environment: variables set for the process, over the test's own.
    package static func run(
        _ arguments: [String], stdin: Data = Data(), timeout: Double? = nil, directory: String? = nil, environment: [String: String] = [:]
    ) throws -> SamlgateProcess {
        try launch(executable, arguments, stdin: stdin, timeout: timeout, directory: directory, environment: environment)
    }

    /// ``run(_:stdin:timeout:directory:)`` waited for on a thread of its own. For a process that
    /// talks to a server in the test process: blocking one of Swift concurrency's few threads
    /// while it runs starves that server (its answers wait for a free thread, the gateway in
    /// front of it times out).
    package static func runOffPool(_ arguments: [String], timeout: Double? = nil) async throws -> SamlgateProcess {
        try await onOwnThread { try run(arguments, timeout: timeout) }
    }

    /// Waits for `process` to exit on a thread of its own (see ``runOffPool(_:timeout:)``).
    package static func waitForExit(_ process: Process) async throws {
        // Only the wait runs on the other thread.
        try await onOwnThread { process.waitUntilExit() }
    }

    private static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs samlgate with arguments given as bytes, which need not be UTF-8 (file names on
    /// Linux are bytes). `Process` only takes strings, so `/bin/sh` rebuilds each argument
    /// from an octal-escaped spelling with `printf '%b'` and then becomes samlgate.
    package static func run(byteArguments arguments: [[UInt8]], stdin: Data = Data(), timeout: Double? = nil) throws -> SamlgateProcess {
        // The trailing "x" keeps a final line break from being eaten by the substitution.
        let script = #"bin=$1; shift; n=$#; for a do v=$(printf '%bx' "$a"); set -- "$@" "${v%x}"; done; shift $n; exec "$bin" "$@""#
        let escaped = arguments.map { bytes in
            bytes.map { byte in
                guard !(0x21...0x7E).contains(byte) || byte == UInt8(ascii: "\\") else { return String(UnicodeScalar(byte)) }
                let octal = String(byte, radix: 8)
                return "\\0" + String(repeating: "0", count: 3 - octal.count) + octal  // always three digits
            }.joined()
        }
        return try launch(
            URL(fileURLWithPath: "/bin/sh"), ["-c", script, "sh", executable.path] + escaped, stdin: stdin, timeout: timeout, directory: nil,
            environment: [:])
    }

    private static func launch(
        _ program: URL, _ arguments: [String], stdin: Data, timeout: Double?, directory: String?, environment: [String: String]
    ) throws -> SamlgateProcess {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if process.isRunning { process.terminate() } }
        }
        // Feed stdin and drain both pipes concurrently so large outputs cannot deadlock.
        let writer = Thread {
            input.fileHandleForWriting.write(stdin)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let errorBox = LockedData()
        let errorReader = Thread { errorBox.set(error.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorBox.isSet { usleep(1000) }
        return SamlgateProcess(
            status: process.terminationStatus, stdout: out, stderr: String(decoding: errorBox.value, as: UTF8.self))
    }

    /// The first line a running process writes to `handle` (a server's start-up line), read as
    /// it arrives; what came before the end of the stream when there is no newline.
    package static func firstLine(of handle: FileHandle) -> String {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Writes `contents` to a fresh file in a temporary directory and returns its path.
    package static func temporaryFile(_ name: String, _ contents: Data) throws -> String {
        let dir = TestScratch.directory("samlgate-tests")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}

/// A write-once box for data produced on another thread.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}
