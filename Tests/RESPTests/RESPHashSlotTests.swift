import CLITestSupport
import NIOCore
import RESP
import Testing

/// The cluster hash slot samlgate routes a key to, against the slot a real `redis-server` in
/// cluster mode computes for it (`CLUSTER KEYSLOT`). A wrong slot would mostly go unseen in the
/// cluster tests, hidden by the `-MOVED` redirect that follows it; here every key is compared.
@Suite("RESP cluster hash slots")
struct RESPHashSlotTests {
    /// Hash tags and their edge cases (the first `{`, an empty tag, no closing brace, nested
    /// braces), binary and non-ASCII bytes, long keys, and samlgate's own key shapes.
    static let keys: [[UInt8]] = {
        var keys: [[UInt8]] = [
            "foo", "bar", "hello", "123456789", "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
            "foo{bar}{zap}", "{}", "{", "}", "{a", "a}", "}{a}", "{{}}", "a{b}c{d}", "é", "Ω{Ω}", "",
            "samlgate:replay:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", "samlgate:throttle:{127.0.0.1}:exchange",
        ].map { Array($0.utf8) }
        keys.append([0, 1, 2, 255, 254, 123, 0, 125])
        keys.append(Array(repeating: UInt8(ascii: "x"), count: 1000))
        var generator = SystemRandomNumberGenerator()
        for length in 1...64 {
            keys.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        return keys
    }()

    @Test("every key lands in the slot Redis computes for it")
    func slotsMatchRedis() async throws {
        try await RedisServerProcess.with(arguments: ["--cluster-enabled", "yes", "--cluster-port", String(try RedisServerProcess.freePort())]) {
            redis in
            let client = try RESPClientTests.client(redis.url)
            for key in Self.keys {
                let reply = try await RESPClientTests.send(
                    client, RESPCommand([ByteBuffer(string: "CLUSTER"), ByteBuffer(string: "KEYSLOT"), ByteBuffer(bytes: key)]))
                #expect(reply == .integer(Int64(RESPHashSlot.of(ByteBuffer(bytes: key)))), "key \(key)")
            }
        }
    }
}
