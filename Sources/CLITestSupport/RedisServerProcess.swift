import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` (the Debian package `make deps` installs) on a free loopback port, for
/// the tests of the Redis client and the shared replay store. Nothing is saved to disk.
///
/// Use ``with(arguments:_:)``: it stops the server when the body returns or throws. ``stop()``
/// and ``start()`` take the same server down and up again on the same port (an outage, a
/// restart).
package final class RedisServerProcess: @unchecked Sendable {
    package let port: Int
    private let arguments: [String]
    private let directory: URL
    private let lock = NSLock()
    private var process: Process?
    /// A Sentinel's configuration file (Sentinel rewrites it, so it must be a file of its own).
    private var sentinelConfiguration: URL?

    /// - Parameters:
    ///   - arguments: extra configuration, e.g. `["--requirepass", "secret"]`.
    ///   - tls: serve TLS only (`rediss://`) with this certificate and key (PEM files).
    package init(arguments: [String] = [], tls: (certificate: String, key: String)? = nil) throws {
        port = try Self.freePort()
        if let tls {
            self.arguments =
                [
                    "--tls-port", String(port), "--tls-cert-file", tls.certificate, "--tls-key-file", tls.key,
                    "--tls-auth-clients", "no",
                ] + arguments
        } else {
            self.arguments = arguments
        }
        directory = TestScratch.directory("samlgate-redis")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Starts a server, runs `body`, and stops the server whatever happens.
    package static func with<T>(
        arguments: [String] = [], tls: (certificate: String, key: String)? = nil,
        _ body: (RedisServerProcess) async throws -> T
    ) async throws -> T {
        let server = try RedisServerProcess(arguments: arguments, tls: tls)
        defer { server.stop(removingFiles: true) }
        try await server.start()
        return try await body(server)
    }

    package var url: String { "redis://127.0.0.1:\(port)" }

    /// A Sentinel (Debian's `redis-server` in Sentinel mode) monitoring the primary on
    /// `primaryPort` under `name`, judging a primary down after 500 ms: not started.
    /// - Parameters:
    ///   - quorum: Sentinels that must agree a primary is down (of as many as run).
    ///   - password: the Sentinel's own `requirepass`.
    ///   - tls: serve TLS only with this certificate and key (PEM files), and reach the primary
    ///     (a TLS-only server) over TLS, trusting `certificate` as its authority.
    package static func sentinel(
        monitoring primaryPort: Int, name: String, quorum: Int = 1, password: String? = nil, tls: (certificate: String, key: String)? = nil
    ) throws -> RedisServerProcess {
        let sentinel = try RedisServerProcess()
        let file = sentinel.directory.appendingPathComponent("sentinel.conf")
        let listening =
            tls.map {
                """
                port 0
                tls-port \(sentinel.port)
                tls-cert-file \($0.certificate)
                tls-key-file \($0.key)
                tls-ca-cert-file \($0.certificate)
                tls-auth-clients no
                tls-replication yes
                """
            } ?? "port \(sentinel.port)"
        let text = """
            \(listening)
            bind 127.0.0.1
            dir \(sentinel.directory.path)
            sentinel monitor \(name) 127.0.0.1 \(primaryPort) \(quorum)
            sentinel down-after-milliseconds \(name) 500
            sentinel failover-timeout \(name) 2000
            \(password.map { "requirepass \($0)" } ?? "")

            """
        try text.write(to: file, atomically: true, encoding: .utf8)
        sentinel.sentinelConfiguration = file
        return sentinel
    }

    /// A self-signed certificate (its own authority) whose only subject alternative name is
    /// `san` (127.0.0.1 by default) and its key, as PEM files in `directory`: what a TLS-only
    /// test server presents.
    package static func selfSignedCertificate(in directory: URL, san: String = "IP:127.0.0.1") throws -> (certificate: String, key: String) {
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-subj", "/CN=redis-test",
            "-addext", "subjectAltName=\(san)", "-days", "1",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw RedisServerError("openssl could not make a certificate") }
        return (certificate, key)
    }

    /// Starts the server and returns once it accepts connections (at most 10 s). Waits by
    /// sleeping the task, not the thread: tests share a few cooperative threads.
    package func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        // With TLS, the plain port is 0 (none) and `arguments` opens the TLS one.
        let plainPort = arguments.contains("--tls-port") ? 0 : port
        if let sentinelConfiguration {
            process.arguments = [sentinelConfiguration.path, "--sentinel", "--daemonize", "no", "--loglevel", "warning"]
        } else {
            process.arguments =
                [
                    "--port", String(plainPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--daemonize", "no", "--loglevel", "warning", "--dir", directory.path,
                ] + arguments
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        for _ in 0..<500 {
            if Self.accepts(port: port) { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        stop()
        throw RedisServerError("redis-server did not start on port \(port)")
    }

    /// Stops the server (SIGKILL, then waits); a no-op when it is not running. SIGKILL because a
    /// child started from the test process inherits its blocked signals (SIGTERM among them),
    /// and this server has nothing to save.
    package func stop() {
        stop(removingFiles: false)
    }

    private func stop(removingFiles: Bool) {
        let running = lock.withLock { () -> Process? in
            defer { process = nil }
            return process
        }
        if let running, running.isRunning {
            kill(running.processIdentifier, SIGKILL)
            running.waitUntilExit()
        }
        if removingFiles { try? FileManager.default.removeItem(at: directory) }
    }

    /// Sends `signal` to the running server (`SIGSTOP`: a server that hangs; `SIGCONT` resumes it).
    package func send(signal: Int32) {
        if let running = lock.withLock({ process }), running.isRunning { kill(running.processIdentifier, signal) }
    }

    static var executable: String {
        for path in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"] where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return "/usr/bin/redis-server"
    }

    /// A loopback port no other server of this process had, free now, below the kernel's
    /// ephemeral range (32768 and up): a port the kernel hands out (`bind` to port 0, a client's
    /// source port) would be the same source, and a server stopped for an outage or killed for a
    /// failover would find its port taken by another test's server when it starts again — and
    /// the Sentinels watching it would then reconfigure that other test's Redis.
    package static func freePort() throws -> Int {
        try portLock.withLock {
            for _ in 0..<portRange.count {
                let port = portRange.lowerBound + nextPort % portRange.count
                nextPort += 1
                if canBind(port) { return port }
            }
            throw RedisServerError("no free loopback port in \(portRange)")
        }
    }

    private static let portRange = 20_000..<32_000
    private static let portLock = NSLock()
    /// Where this process starts in ``portRange`` (another test process elsewhere in it).
    nonisolated(unsafe) private static var nextPort = Int(getpid()) * 97 % portRange.count

    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

// MARK: - Errors

/// The test Redis could not be started.
package struct RedisServerError: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
