import NIOCore
import NIOEmbedded
import Testing

@testable import Gateway

/// The connection's answer budget on virtual time (``HTTP2AnswerBudget``): reservations before
/// reads, room given back in order, and the stall clock that closes a connection which holds its
/// budget for its bound — and not one moment before.
@Suite("HTTP/2 answer budget, on virtual time")
struct HTTP2AnswerBudgetTests {
    static let read = HTTP2AnswerBudget.readSize

    @Test("reads reserved: 16 readers per MiB, the 17th waits, and resumes once a reader gives its read back")
    func reservations() {
        let loop = EmbeddedEventLoop()
        let budget = HTTP2AnswerBudget(limit: 16 * Self.read, stall: .seconds(10), eventLoop: loop)
        for _ in 0..<16 { #expect(budget.acquire()) }
        #expect(!budget.acquire())
        var resumed = false
        budget.waitForRoom {
            resumed = budget.acquire()
            return resumed
        }
        #expect(!resumed)
        budget.giveBack()
        #expect(resumed && budget.reserved == 16 * Self.read)
    }

    @Test("a budget smaller than a read still lets one stream read at a time")
    func smallBudget() {
        let budget = HTTP2AnswerBudget(limit: 16_384, stall: .seconds(10), eventLoop: EmbeddedEventLoop())
        #expect(budget.acquire())
        #expect(!budget.acquire())
        budget.giveBack()
        budget.hold(16_384)
        #expect(!budget.acquire(), "held answers fill the budget")
        budget.release(16_384)
        #expect(budget.acquire())
    }

    @Test("held answers that leave no room stall the connection after exactly the bound; taken in time, they do not")
    func stallClock() {
        let loop = EmbeddedEventLoop()
        let budget = HTTP2AnswerBudget(limit: 4 * Self.read, stall: .seconds(10), eventLoop: loop)
        var stalls = 0
        budget.onStall = { stalls += 1 }
        budget.hold(4 * Self.read)
        loop.advanceTime(by: .seconds(9))
        #expect(stalls == 0)
        // The client took some: the clock stops; spent again, it starts over.
        budget.release(2 * Self.read)
        loop.advanceTime(by: .seconds(5))
        #expect(stalls == 0)
        budget.hold(2 * Self.read)
        loop.advanceTime(by: .seconds(9))
        #expect(stalls == 0)
        loop.advanceTime(by: .seconds(1))
        #expect(stalls == 1)
        budget.close()
    }

    @Test("a small slice of a large read buffer is copied before it waits; a part that fills its buffer is not")
    func compaction() {
        var large = ByteBufferAllocator().buffer(capacity: 16_384)
        large.writeRepeatingByte(0x61, count: 16_384)
        let slice = large.getSlice(at: 0, length: 1024)!
        let copied = HTTP2AnswerBudget.compacted(slice, allocator: ByteBufferAllocator())
        #expect(copied.storageCapacity < 4096 && !Self.sameStorage(copied, large))
        #expect(copied == slice)
        // Kept, not copied: the very bytes of the read (a copy of the same capacity would pass a
        // capacity check).
        #expect(Self.sameStorage(HTTP2AnswerBudget.compacted(large, allocator: ByteBufferAllocator()), large))
    }

    /// Whether two buffers' readable bytes start at the same address: one storage, not a copy.
    static func sameStorage(_ a: ByteBuffer, _ b: ByteBuffer) -> Bool {
        a.withUnsafeReadableBytes { x in b.withUnsafeReadableBytes { y in x.baseAddress == y.baseAddress } }
    }
}
