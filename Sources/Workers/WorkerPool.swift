import CThreadName
import Dispatch
import Foundation
import NIOCore
import Synchronization

/// A fixed set of threads for CPU-bound work (signature verification, encoding), with a bounded
/// queue.
///
/// Why own threads rather than the global Dispatch pool or Swift concurrency's cooperative pool:
/// the verifier keeps its libxml2/xmlsec state in thread-local storage, so a small fixed set of
/// long-lived threads means a small fixed set of contexts, built once; and blocking work must
/// never run on NIO event loops or starve the cooperative pool. When more than ``queueLimit``
/// jobs wait, ``run(_:)`` fails at once with ``WorkerPoolError/overloaded`` so the gateway can
/// answer 503 instead of queueing without bound.
///
/// Locks here and elsewhere in samlgate are NIO's (a pthread mutex), not the standard library's
/// `Mutex`: on Linux that one waits on a bare futex ThreadSanitizer cannot see, so `make
/// sanitize` reported every access under it as a race and could not check the locking at all.
package final class WorkerPool: Sendable {
    package typealias Job = @Sendable () -> Void

    private struct State {
        var jobs = CircularBuffer<Job>(initialCapacity: 64)
        var idle = 0
        var stopped = false
    }

    private let state = Mutex(State())
    /// Counts queued jobs (plus one wake-up per thread at shutdown).
    private let available = DispatchSemaphore(value: 0)
    package let threadCount: Int
    package let queueLimit: Int

    /// - Parameter name: the threads are named `name-N` (what `top -H` and `perf` show). Linux
    ///   keeps 15 bytes of a thread name (Foundation's `Thread.name` silently set nothing for a
    ///   longer one), so the name is cut to fit rather than lost.
    package init(threads: Int, queueLimit: Int, name: String = "saml-worker") {
        precondition(threads > 0, "a worker pool needs at least one thread")
        self.threadCount = threads
        self.queueLimit = queueLimit
        for index in 0..<threads {
            let threadName = String(decoding: "\(name)-\(index)".utf8.prefix(15), as: UTF8.self)
            let thread = Thread { [self] in
                // Set from the thread itself: a new thread inherits its creator's name.
                _ = cthreadname_set_current(threadName)
                self.workLoop()
            }
            thread.start()
        }
    }

    /// Jobs accepted but not yet started.
    package var queueDepth: Int {
        state.withLock { $0.jobs.count }
    }

    /// Runs `work` on a worker thread and returns its result; fails at once with
    /// ``WorkerPoolError/overloaded`` when the queue is full, or ``WorkerPoolError/stopped``.
    package func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws(WorkerPoolError) -> T {
        let result: Result<T, WorkerPoolError> = await withUnsafeContinuation { continuation in
            let outcome = enqueue { continuation.resume(returning: .success(work())) }
            if let outcome { continuation.resume(returning: .failure(outcome)) }
        }
        return try result.get()
    }

    /// Queues `job`; returns the reason when it was refused.
    package func enqueue(_ job: @escaping Job) -> WorkerPoolError? {
        let refusal: WorkerPoolError? = state.withLock { state in
            if state.stopped { return .stopped }
            // Idle threads take jobs at once, so they do not count against the queue bound.
            guard state.jobs.count < queueLimit + state.idle else { return .overloaded }
            state.jobs.append(job)
            return nil
        }
        if refusal == nil { available.signal() }
        return refusal
    }

    /// Lets the threads finish the queued jobs and exit. Jobs submitted afterwards are refused.
    package func shutdown() {
        state.withLock { $0.stopped = true }
        for _ in 0..<threadCount { available.signal() }
    }

    private func workLoop() {
        while true {
            state.withLock { $0.idle += 1 }
            available.wait()
            let job: Job? = state.withLock { state in
                state.idle -= 1
                return state.jobs.popFirst()
            }
            guard let job else {
                if state.withLock({ $0.stopped && $0.jobs.isEmpty }) { return }
                continue
            }
            job()
        }
    }
}

// MARK: - Errors

/// Why the ``WorkerPool`` refused a job.
package enum WorkerPoolError: Error, Sendable {
    /// The queue is at its bound: answer 503 `overloaded` with `Retry-After`.
    case overloaded
    /// The pool is shutting down.
    case stopped
}

// MARK: - CPUs

/// How many CPUs the process may use, to size its threads: the event loops and the workers.
///
/// NIO's `System.coreCount` reads the cgroup's CPU quota and cpuset, but not the process's
/// affinity mask, so a gateway pinned with `taskset` (or by a runtime that sets only the
/// affinity) to 2 of 16 cores would run 16 event loops on 2 CPUs: threads that take turns on
/// the same cores, each switch paid for. The count is the smaller of the two; at least 1.
public enum UsableCPUs {
    public static var count: Int {
        let affinity = Int(cthreadname_affinity_cpu_count())
        let available = System.coreCount
        return max(1, affinity > 0 ? min(affinity, available) : available)
    }
}
