import Dispatch
import NIOCore
import RESP
import Testing

/// The reply decoder on its own: resuming across split reads, its bounds, and refusing a reply
/// type the command cannot have.
@Suite("RESP value decoder")
struct RESPValueDecoderTests {
    /// Feeds `bytes` in pieces of `size` and returns the replies decoded, in order.
    static func decode(_ bytes: [UInt8], in size: Int, accepting: RESPReplyTypes = .any) throws -> [RESPValue] {
        var decoder = RESPValueDecoder()
        var buffer = ByteBuffer()
        var values: [RESPValue] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + size, bytes.count)
            buffer.writeBytes(bytes[offset..<end])
            offset = end
            while let value = try decoder.next(from: &buffer, accepting: accepting) { values.append(value) }
        }
        return values
    }

    static func kind(of error: any Error) -> RESPError.Kind? { (error as? RESPError)?.kind }

    @Test("every reply type, split at every byte: the same replies as in one read")
    func resumesAcrossSplitReads() throws {
        let text = "+OK\r\n-ERR no\r\n:42\r\n$5\r\nhello\r\n$-1\r\n*-1\r\n*0\r\n*3\r\n:1\r\n*2\r\n$1\r\na\r\n+b\r\n$0\r\n\r\n"
        let expected: [RESPValue] = [
            .simpleString("OK"), .error("ERR no"), .integer(42), .bulkString(ByteBuffer(string: "hello")), .null, .null, .array([]),
            .array([.integer(1), .array([.bulkString(ByteBuffer(string: "a")), .simpleString("b")]), .bulkString(ByteBuffer())]),
        ]
        for size in 1...8 {
            #expect(try Self.decode(Array(text.utf8), in: size) == expected, "pieces of \(size) bytes")
        }
    }

    @Test("a reply of a type the command cannot have is refused on its first byte: an array for SET, AUTH, SELECT, PING")
    func refusesTypes() throws {
        for name in ["SET", "AUTH", "SELECT", "PING"] {
            let types = RESPCommand.replyTypes(of: name)
            #expect(throws: RESPError.self) { try Self.decode(Array("*".utf8), in: 1, accepting: types) }
            #expect(try Self.decode(Array("+OK\r\n".utf8), in: 1, accepting: types) == [.simpleString("OK")])
        }
        #expect(throws: RESPError.self) { try Self.decode(Array(":".utf8), in: 1, accepting: RESPCommand.replyTypes(of: "SET")) }
        #expect(throws: RESPError.self) { try Self.decode(Array("?x\r\n".utf8), in: 1) }
        #expect(RESPCommand.replyTypes(of: "KEYS").contains(.array))
    }

    @Test("bounds: nesting deeper than maximumDepth, arrays over maximumArrayCount, replies over maximumReplyBytes, long lines")
    func bounds() throws {
        let deep = String(repeating: "*1\r\n", count: RESPValueDecoder.maximumDepth + 1) + ":1\r\n"
        #expect { try Self.decode(Array(deep.utf8), in: 1) } throws: { Self.kind(of: $0) == .protocol }
        let shallow = String(repeating: "*1\r\n", count: RESPValueDecoder.maximumDepth) + ":1\r\n"
        #expect(try Self.decode(Array(shallow.utf8), in: 3).count == 1)
        #expect(throws: RESPError.self) { try Self.decode(Array("*\(RESPValueDecoder.maximumArrayCount + 1)\r\n".utf8), in: 64) }
        #expect(throws: RESPError.self) { try Self.decode(Array("$\(RESPValueDecoder.maximumReplyBytes + 1)\r\n".utf8), in: 64) }
        // Many bulk strings in one array: refused once their sum passes the bound, long before the end.
        let chunk = 600 * 1024
        let sum = "*2\r\n$\(chunk)\r\n" + String(repeating: "x", count: chunk) + "\r\n$\(chunk)\r\n"
        #expect(throws: RESPError.self) { try Self.decode(Array(sum.utf8), in: 4096) }
        let line = "+" + String(repeating: "x", count: RESPValueDecoder.maximumLineLength + 1)
        #expect(throws: RESPError.self) { try Self.decode(Array(line.utf8), in: 4096) }
    }

    @Test("a near-maximum reply in 1-byte reads costs about what it costs in one read: no re-parse from the start")
    func linearCost() throws {
        // An array of 1,000 bulk strings of 1,000 bytes (about 1 MB).
        var text = "*1000\r\n"
        let element = "$1000\r\n" + String(repeating: "y", count: 1000) + "\r\n"
        for _ in 0..<1000 { text += element }
        let bytes = Array(text.utf8)
        func seconds(_ size: Int) throws -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            let values = try Self.decode(bytes, in: size)
            #expect(values.count == 1)
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        // Re-parsing from the start on each of ~1M reads would take minutes; resuming, a second
        // or two even in a debug build on a loaded machine.
        let split = try seconds(1)
        #expect(split < 20, "1-byte reads took \(split) s")
    }
}
