import CLITestSupport
import Foundation
import NIOCore
import NIOPosix
import RESP
import Testing

/// The Redis client against a real `redis-server` started by each test on a free loopback port.
@Suite("RESP client")
struct RESPClientTests {
    static let group = MultiThreadedEventLoopGroup.singleton

    static func client(_ url: String, connections: Int = 1, timeout: TimeAmount = .seconds(2)) throws -> RESPClient {
        try RESPClient(url: RedisURL(parsing: url), eventLoopGroup: group, connectionsPerLoop: connections,
                       connectTimeout: timeout, commandTimeout: timeout)
    }

    static func send(_ client: RESPClient, _ command: RESPCommand, on loop: (any EventLoop)? = nil) async throws -> RESPValue {
        try await client.submit(command, on: loop ?? group.next()).get()
    }

    static func kind(of error: any Error) -> RESPError.Kind? {
        (error as? RESPError)?.kind
    }

    @Test("SET NX PXAT records a key once: OK, then a null reply; the key expires at the given instant")
    func setIfAbsent() async throws {
        try await RedisServerProcess.with { redis in
            let client = try Self.client(redis.url)
            let expiry = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresAtMilliseconds: expiry)
            #expect(try await Self.send(client, set) == .simpleString("OK"))
            #expect(try await Self.send(client, set) == .null)
            // The absolute expiry Redis holds is the one sent (Redis ≥ 7.0 answers PEXPIRETIME).
            #expect(try await Self.send(client, RESPCommand("PEXPIRETIME", "k")) == .integer(expiry))
            await client.shutdown()
        }
    }

    @Test("pipelined commands on one connection get their own replies, in order")
    func pipelining() async throws {
        try await RedisServerProcess.with { redis in
            let client = try Self.client(redis.url)
            let loop = Self.group.next()
            let replies = try await loop.flatSubmit {
                let futures = (0..<300).map { _ in client.send(RESPCommand("INCR", "counter"), on: loop) }
                return EventLoopFuture.whenAllSucceed(futures, on: loop)
            }.get()
            #expect(replies == (1...300).map { RESPValue.integer(Int64($0)) })
            await client.shutdown()
        }
    }

    @Test("AUTH with a password, AUTH with an ACL user, SELECT: keys land in the chosen database; a wrong password fails")
    func authAndSelect() async throws {
        let acl = ["--requirepass", "s3cret", "--user", "gate", "on", ">gatepass", "~*", "&*", "+@all"]
        try await RedisServerProcess.with(arguments: acl) { redis in
            let inDatabase3 = try Self.client("redis://:s3cret@127.0.0.1:\(redis.port)/3")
            #expect(try await Self.send(inDatabase3, RESPCommand("SET", "where", "db3")) == .simpleString("OK"))
            let user = try Self.client("redis://gate:gatepass@127.0.0.1:\(redis.port)/3")
            guard case .bulkString(let value) = try await Self.send(user, RESPCommand("GET", "where")) else {
                Issue.record("the ACL user does not see database 3's key")
                return
            }
            #expect(String(buffer: value) == "db3")
            let inDatabase0 = try Self.client("redis://:s3cret@127.0.0.1:\(redis.port)")
            #expect(try await Self.send(inDatabase0, RESPCommand("GET", "where")) == .null)

            let wrong = try Self.client("redis://:nope@127.0.0.1:\(redis.port)")
            await #expect { try await Self.send(wrong, .ping) } throws: { Self.kind(of: $0) == .server }
            let none = try Self.client(redis.url)
            await #expect { try await Self.send(none, RESPCommand("GET", "where")) } throws: { Self.kind(of: $0) == .server }
            for client in [inDatabase3, user, inDatabase0, wrong, none] { await client.shutdown() }
        }
    }

    @Test("a server that never answers: the command fails with timeout")
    func commandTimeout() async throws {
        let silent = try await ServerBootstrap(group: Self.group)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let client = try Self.client("redis://127.0.0.1:\(silent.localAddress!.port!)", timeout: .milliseconds(200))
        await #expect { try await Self.send(client, .ping) } throws: { Self.kind(of: $0) == .timeout }
        await client.shutdown()
        try await silent.close()
    }

    @Test("server down: connect fails, then fails fast while backing off; after a restart the same client recovers")
    func reconnect() async throws {
        try await RedisServerProcess.with { redis in
            let client = try Self.client(redis.url, timeout: .milliseconds(500))
            let loop = Self.group.next()
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(client.isReachable == true)
            redis.stop()
            // The open connection learns of the close; the next command reconnects and fails.
            var kinds: [RESPError.Kind] = []
            // Commands right after a failed connect fail at once (`backoff`); on a loaded machine
            // a window may pass between two of them, so a few are tried.
            for _ in 0..<6 {
                do {
                    _ = try await Self.send(client, .ping, on: loop)
                } catch {
                    kinds.append(Self.kind(of: error) ?? .shutdown)
                }
            }
            #expect(kinds.count == 6)
            #expect(kinds.contains(.connect) || kinds.contains(.closed))
            #expect(kinds.contains(.backoff))
            #expect(client.isReachable == false)
            try await redis.start()
            var recovered = false
            for _ in 0..<100 where !recovered {
                recovered = (try? await Self.send(client, .ping, on: loop)) == .simpleString("PONG")
                if !recovered { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(recovered)
            #expect(client.isReachable == true)
            await client.shutdown()
        }
    }

    @Test("rediss://: TLS to a server whose certificate the given CA file vouches for; refused with the system roots")
    func tls() async throws {
        let directory = TestScratch.directory("samlgate-redis-tls")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        // A self-signed certificate for 127.0.0.1: its own CA.
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-subj", "/CN=redis-test",
                             "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        try await RedisServerProcess.with(tls: (certificate, key)) { redis in
            let url = try RedisURL(parsing: "rediss://127.0.0.1:\(redis.port)")
            let trusting = try RESPClient(url: url, eventLoopGroup: Self.group, connectTimeout: .seconds(2), commandTimeout: .seconds(2),
                                          trustedCertificatesFile: certificate)
            #expect(try await Self.send(trusting, .ping) == .simpleString("PONG"))
            let systemRoots = try RESPClient(url: url, eventLoopGroup: Self.group, connectTimeout: .seconds(2), commandTimeout: .seconds(2))
            await #expect(throws: RESPError.self) { try await Self.send(systemRoots, .ping) }
            let plain = try Self.client("redis://127.0.0.1:\(redis.port)", timeout: .milliseconds(500))
            await #expect(throws: RESPError.self) { try await Self.send(plain, .ping) }
            for client in [trusting, systemRoots, plain] { await client.shutdown() }
        }
    }

    @Test("after shutdown, commands fail with shutdown")
    func shutdown() async throws {
        try await RedisServerProcess.with { redis in
            let client = try Self.client(redis.url)
            #expect(try await Self.send(client, .ping) == .simpleString("PONG"))
            await client.shutdown()
            await #expect { try await Self.send(client, .ping) } throws: { Self.kind(of: $0) == .shutdown }
        }
    }

    @Test("redis URLs: user, password, port, database, TLS; the description masks the password; bad ones are refused")
    func urls() throws {
        let full = try RedisURL(parsing: "rediss://gate:p%40ss@cache.internal:6380/2")
        #expect(full == RedisURL(host: "cache.internal", port: 6380, user: "gate", password: "p@ss", database: 2, tls: true))
        #expect(full.description == "rediss://gate:***@cache.internal:6380/2")
        #expect(!full.description.contains("p@ss"))
        #expect(try RedisURL(parsing: "redis://127.0.0.1") == RedisURL(host: "127.0.0.1"))
        #expect(try RedisURL(parsing: "redis://:pw@[::1]:7000").host == "::1")
        for bad in ["http://h:1", "redis://", "redis://h:1/x", "redis://h:1/0?a=b", "redis://u@h:1", "redis://h:99999", "not a url"] {
            #expect(throws: RESPError.self, "\(bad)") { try RedisURL(parsing: bad) }
        }
    }
}
