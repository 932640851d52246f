import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import RESP

/// The cluster map's questions (`CLUSTER SLOTS`) with scripted nodes on an embedded loop: which
/// node is asked, when a question ends, and who is told.
@Suite("RESP cluster map")
struct RESPClusterMapTests {
    static let seeds = [RedisAddress(host: "127.0.0.1", port: 7000), RedisAddress(host: "127.0.0.1", port: 7001)]
    /// One primary, port 7002, serving every slot.
    static let slots = RESPValue.array([
        .array([.integer(0), .integer(16383), .array([.bulkString(ByteBuffer(string: "127.0.0.1")), .integer(7002)])])
    ])

    /// Nodes whose answers the test gives: each question is held until answered.
    final class Nodes: Sendable {
        let loop: EmbeddedEventLoop
        let asked = Mutex<[(RedisAddress, EventLoopPromise<RESPValue>)]>([])

        init(_ loop: EmbeddedEventLoop) {
            self.loop = loop
        }

        func ask(_ command: RESPCommand, _ node: RedisAddress) -> EventLoopFuture<RESPValue> {
            let promise = loop.makePromise(of: RESPValue.self)
            asked.withLock { $0.append((node, promise)) }
            return promise.futureResult
        }

        /// The question to the `index`-th node asked, answered.
        func answer(_ index: Int, with result: Result<RESPValue, any Error>) {
            let promise = asked.withLock { $0[index].1 }
            promise.completeWith(result)
            loop.run()
        }

        var addresses: [RedisAddress] { asked.withLock { $0.map(\.0) } }
    }

    struct Refused: Error {}

    @Test("the nodes are asked in turn until one answers: the map is read, every caller told yes, once")
    func answered() throws {
        let loop = EmbeddedEventLoop()
        let nodes = Nodes(loop)
        let map = RESPClusterMap(seeds: Self.seeds, onRefresh: {})
        let first = map.refresh(on: loop, ask: nodes.ask)
        // A question under way is joined, not asked again.
        let joined = map.refresh(on: loop, ask: nodes.ask)
        #expect(nodes.addresses == [Self.seeds[0]])
        nodes.answer(0, with: .failure(Refused()))
        #expect(nodes.addresses == Self.seeds, "the next node after a failure")
        nodes.answer(1, with: .success(Self.slots))
        #expect(try first.wait() && joined.wait())
        #expect(map.refreshes == 1 && map.uncovered == 0)
        #expect(map.owner(of: 1234) == RedisAddress(host: "127.0.0.1", port: 7002))
    }

    @Test("no node answers: every caller told no at once, and the next question asks again")
    func unanswered() throws {
        let loop = EmbeddedEventLoop()
        let nodes = Nodes(loop)
        let map = RESPClusterMap(seeds: Self.seeds, onRefresh: {})
        let question = map.refresh(on: loop, ask: nodes.ask)
        nodes.answer(0, with: .failure(Refused()))
        nodes.answer(1, with: .success(.error("CLUSTERDOWN")))
        #expect(try question.wait() == false)
        #expect(map.refreshes == 0)
        _ = map.refresh(on: loop, ask: nodes.ask)
        #expect(nodes.addresses.count == 3, "a new question once the last ended")
    }
}
