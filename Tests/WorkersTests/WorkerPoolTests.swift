import Dispatch
import Foundation
import Synchronization
import Testing
import Workers

/// The worker pool on its own: jobs run on its named threads, the queue bound refuses at once,
/// and a shutdown finishes what was queued and refuses the rest.
@Suite struct WorkerPoolTests {
    @Test func jobsRunOnTheNamedThreads() async throws {
        let pool = WorkerPool(threads: 2, queueLimit: 8, name: "test-pool-with-a-long-name")
        defer { pool.shutdown() }
        let name = try await pool.run { () -> String in
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        }
        // Linux keeps 15 bytes of a name: cut, not lost.
        #expect(name == "test-pool-with-\n", "\(name)")
        let sum = try await pool.run { (1...100).reduce(0, +) }
        #expect(sum == 5050)
    }

    @Test func aFullQueueRefusesAtOnce() throws {
        let pool = WorkerPool(threads: 1, queueLimit: 1)
        defer { pool.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        // The only thread is held, one job waits in the queue: the next is refused.
        #expect(
            pool.enqueue {
                started.signal()
                release.wait()
            } == nil)
        started.wait()
        #expect(pool.enqueue {} == nil)
        #expect(pool.enqueue {} == .overloaded)
        #expect(pool.queueDepth == 1)
        release.signal()
    }

    @Test func shutdownFinishesTheQueueAndRefusesMore() throws {
        let pool = WorkerPool(threads: 1, queueLimit: 4)
        let ran = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        #expect(pool.enqueue { release.wait() } == nil)
        for _ in 0..<3 {
            #expect(
                pool.enqueue {
                    ran.add(1, ordering: .relaxed)
                    done.signal()
                } == nil)
        }
        pool.shutdown()
        #expect(pool.enqueue {} == .stopped)
        release.signal()
        for _ in 0..<3 { done.wait() }
        #expect(ran.load(ordering: .relaxed) == 3)
    }
}
