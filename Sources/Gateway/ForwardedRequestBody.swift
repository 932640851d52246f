import Hummingbird
import NIOCore
import Synchronization

/// A client's request body on its way to the upstream, read by AsyncHTTPClient's own task,
/// that the gateway can take back before Hummingbird reads the connection again.
///
/// Why: Hummingbird's request body and the connection's next request come from one inbound
/// stream, which allows one reader at a time. When an upstream answers before it has read the
/// whole body (a 404, 413 or 401 after the head), AsyncHTTPClient can still be waiting for the
/// next chunk of the client's body when the gateway has written the answer; Hummingbird then
/// drains the rest of the body itself, and two readers on the stream crash the process (SwiftNIO
/// traps). ``release()`` closes this sequence to AsyncHTTPClient (it sees the end of the body)
/// and waits for a read in progress, so Hummingbird is the only reader afterwards.
final class ForwardedRequestBody: AsyncSequence, @unchecked Sendable {
    typealias Element = ByteBuffer

    private enum State {
        /// Nobody is reading.
        case idle
        /// AsyncHTTPClient is waiting for a chunk; these wait for it to come back.
        case reading(waiters: [CheckedContinuation<Void, Never>])
        /// Released: AsyncHTTPClient sees the end of the body.
        case released
    }

    private let state = Mutex(State.idle)
    private let failed = Atomic<Bool>(false)

    /// Whether reading the client's body failed (a malformed chunk, a connection closed before
    /// the announced length): an upstream request that failed then failed because of the
    /// client, and must not count against the upstream's health.
    var clientFailed: Bool { failed.load(ordering: .acquiring) }
    /// Touched only by the reader that moved `state` from `idle` to `reading` (hence
    /// `@unchecked Sendable`): the lock hands it from one read to the next.
    private var iterator: RequestBody.AsyncIterator

    init(_ body: RequestBody) {
        iterator = body.makeAsyncIterator()
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let body: ForwardedRequestBody

        func next() async throws -> ByteBuffer? {
            try await body.read()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: self)
    }

    /// The next chunk for AsyncHTTPClient, `nil` at the end of the body or once released.
    func read() async throws -> ByteBuffer? {
        let reading: Bool = state.withLock { state in
            switch state {
            case .idle:
                state = .reading(waiters: [])
                return true
            case .released:
                return false
            case .reading:
                preconditionFailure("the forwarded request body has one reader")
            }
        }
        guard reading else { return nil }
        var iterator = self.iterator
        let chunk: Result<ByteBuffer?, any Error>
        do {
            chunk = .success(try await iterator.next())
        } catch {
            failed.store(true, ordering: .releasing)
            chunk = .failure(error)
        }
        self.iterator = iterator
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard case .reading(let waiters) = state else { preconditionFailure("the forwarded request body has one reader") }
            // A release that came in during the read wins: no further read reaches the stream.
            state = waiters.isEmpty ? .idle : .released
            return waiters
        }
        for waiter in waiters { waiter.resume() }
        return try chunk.get()
    }

    /// Ends the body for AsyncHTTPClient and returns once no read is in progress. Call it once the
    /// answer is written (before Hummingbird reads the connection again), and on every path
    /// that gives up on the upstream.
    func release() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait: Bool = state.withLock { state in
                switch state {
                case .idle, .released:
                    state = .released
                    return false
                case .reading(var waiters):
                    waiters.append(continuation)
                    state = .reading(waiters: waiters)
                    return true
                }
            }
            if !wait { continuation.resume() }
        }
    }
}
