import Dispatch
import Logging
import ServerSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit trail's sink (`audit-log`): its own file, one JSON line per exchange decided
/// (``AuditRecord``), apart from the operational log, so it can be kept, shipped and access
/// controlled on its own terms.
///
/// Lines are written on a serial queue of their own, never on an event loop: a slow or full
/// disk delays the trail, not the requests, and a failed write is counted
/// (`samlgate_audit_errors_total`) and logged at most once a second, never answered to a client.
/// Each line is one `write(2)` on a descriptor opened `O_APPEND`, so lines never interleave.
///
/// Durability: a line reaches the operating system as soon as the queue takes it up; the file is
/// `fsync`ed when it is reopened (SIGHUP, after a rotation) and at shutdown. A host crash can lose
/// what the system had not yet written to disk; a crash of the gateway alone loses nothing written.
package final class AuditLog: Sendable {
    /// `-` for standard output.
    package static let standardOutput = "-"

    /// The file, or ``standardOutput``.
    package let path: String
    private let queue = DispatchQueue(label: "samlgate.audit")
    /// The open descriptor (-1 once closed). Only the queue reads or changes it; the box makes
    /// that safe to say to the compiler, at the cost of an uncontended lock.
    private let descriptor: Mutex<Int32>
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let warnings = WarningThrottle()
    /// Lines queued and not yet written. Past ``maximumPending`` (a disk or a reader of `-`
    /// that stalls) lines are dropped and counted as errors rather than held in memory without
    /// bound: requests that cost the gateway almost nothing (a throttled exchange) write lines too.
    private let pending = Atomic<Int>(0)
    static let maximumPending = 10_000

    /// Opens the file (created `0600`; an existing file keeps its mode): a path that cannot be
    /// opened stops start-up rather than leaving the gateway without its trail.
    package init(path: String, metrics: GatewayMetrics, logger: Logger) throws(ConfigurationError) {
        self.path = path
        self.metrics = metrics
        self.logger = logger
        if path == Self.standardOutput {
            descriptor = Mutex(STDOUT_FILENO)
        } else {
            let opened = Self.openAppending(path)
            guard opened >= 0 else {
                throw ConfigurationError("\(GatewaySetting.auditLog.rawValue) \(path): cannot be opened for appending (\(Self.describe(errno)))")
            }
            descriptor = Mutex(opened)
        }
        metrics.auditLines(0)
        metrics.auditErrors(0)
    }

    private static func openAppending(_ path: String) -> Int32 {
        var fd: Int32
        repeat {
            fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        } while fd < 0 && errno == EINTR
        return fd
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Queues the record's line. Returns at once.
    package func write(_ record: AuditRecord) {
        guard pending.add(1, ordering: .relaxed).newValue <= Self.maximumPending else {
            pending.subtract(1, ordering: .relaxed)
            failed("audit line dropped: too many lines waiting for the disk", error: "backlog")
            return
        }
        queue.async {
            self.writeNow(record.line())
            self.pending.subtract(1, ordering: .relaxed)
        }
    }

    private func writeNow(_ line: [UInt8]) {
        let fd = descriptor.withLock { $0 }
        guard fd >= 0 else { return }
        var written: Int
        repeat {
            written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        } while written < 0 && errno == EINTR
        if written == line.count {
            metrics.auditLines(1)
        } else {
            // A short write (a full disk) leaves a partial line: counted as a failure too, and
            // ended, so the next line is not glued onto it.
            if written > 0 { _ = Glibc.write(fd, "\n", 1) }
            failed("audit line not written", error: written < 0 ? Self.describe(errno) : "short write")
        }
    }

    private func failed(_ message: Logger.Message, error: String) {
        metrics.auditErrors(1)
        guard let suppressed = warnings.admit() else { return }
        logger.error(
            message,
            metadata: ["audit_log": .string(path), "error": .string(error), "suppressed": .stringConvertible(suppressed)])
    }

    /// Reopens the path (SIGHUP), after a rotation renamed the file: the old one is synced and
    /// closed, lines go on into a new file at the path. When the path cannot be opened, lines go
    /// on into the old file and the failure is logged. Queued behind the lines before it.
    package func reopen() {
        guard path != Self.standardOutput else { return }
        queue.async {
            let old = self.descriptor.withLock { $0 }
            guard old >= 0 else { return }
            let opened = Self.openAppending(self.path)
            guard opened >= 0 else {
                self.metrics.auditErrors(1)
                self.logger.error(
                    "audit log not reopened; lines go on into the file already open",
                    metadata: ["audit_log": .string(self.path), "error": .string(Self.describe(errno))])
                return
            }
            self.sync(old)
            _ = Glibc.close(old)
            self.descriptor.withLock { $0 = opened }
            self.logger.notice("audit log reopened", metadata: ["audit_log": .string(self.path)])
        }
    }

    /// Waits for every line queued so far to be written.
    package func drain() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { done.resume() }
        }
    }

    /// Writes what is queued, syncs and closes the file (at shutdown, after the last request).
    /// Later lines are dropped.
    package func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async {
                let fd = self.descriptor.withLock { fd in
                    defer { fd = -1 }
                    return fd
                }
                if fd >= 0 && self.path != Self.standardOutput {
                    self.sync(fd)
                    _ = Glibc.close(fd)
                }
                done.resume()
            }
        }
    }

    private func sync(_ fd: Int32) {
        if fsync(fd) != 0 { failed("audit log not synced to disk", error: Self.describe(errno)) }
    }
}
