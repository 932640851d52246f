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
        try RESPClient(
            url: RedisURL(parsing: url), eventLoopGroup: group, connectionsPerLoop: connections,
            connectTimeout: timeout, commandTimeout: timeout)
    }

    static func send(_ client: RESPClient, _ command: RESPCommand, on loop: (any EventLoop)? = nil) async throws -> RESPValue {
        try await client.submit(command, on: loop ?? group.next()).get()
    }

    static func kind(of error: any Error) -> RESPError.Kind? {
        (error as? RESPError)?.kind
    }

    @Test("SET NX PX records a key once: OK, then a null reply; the key lives the given milliseconds, counted on Redis from arrival")
    func setIfAbsent() async throws {
        try await RedisServerProcess.with { redis in
            let client = try Self.client(redis.url)
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 60_000)
            let sent = ContinuousClock.now
            #expect(try await Self.send(client, set) == .simpleString("OK"))
            #expect(try await Self.send(client, set) == .null)
            guard case .integer(let ttl) = try await Self.send(client, RESPCommand("PTTL", "k")) else {
                Issue.record("PTTL did not answer an integer")
                return
            }
            let elapsed = Int64((ContinuousClock.now - sent) / .milliseconds(1)) + 1
            // Between 60 s minus what passed since the SET and 60 s: a record kept for another
            // span (or one given as an instant on a clock apart from this one) falls outside.
            #expect(ttl <= 60_000 && ttl >= 60_000 - elapsed, "PTTL \(ttl), \(elapsed) ms elapsed")
            // Never PX 0 (an error in Redis): a lifetime already over still records for 1 ms.
            let over = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k0"), value: ByteBuffer(string: "1"), expiresInMilliseconds: -5)
            #expect(String(buffer: over.arguments[5]) == "1")
            #expect(try await Self.send(client, over) == .simpleString("OK"))
            await client.shutdown()
        }
    }

    /// Sends `command` until it succeeds (the pool backs off after a dropped connection), at most ~5 s.
    static func eventually(_ client: RESPClient, _ command: RESPCommand, on loop: any EventLoop) async throws -> RESPValue? {
        for _ in 0..<100 {
            if let reply = try? await send(client, command, on: loop) { return reply }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test(
        "a primary turned replica (REPLICAOF) answers -READONLY: the command fails as unavailable, the connection is dropped, the store is down; promoted again, the client reconnects"
    )
    func readOnlyReplica() async throws {
        try await RedisServerProcess.with { primary in
            try await RedisServerProcess.with { other in
                let client = try Self.client(primary.url)
                let admin = try Self.client(primary.url)
                let loop = Self.group.next()
                let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 60_000)
                #expect(try await Self.send(client, set, on: loop) == .simpleString("OK"))
                #expect(client.isReachable == true)
                let connectionBefore = try await Self.send(client, RESPCommand("CLIENT", "ID"), on: loop)
                // What the old primary of a failover becomes.
                #expect(try await Self.send(admin, RESPCommand("REPLICAOF", "127.0.0.1", String(other.port))) == .simpleString("OK"))
                do {
                    _ = try await Self.send(client, set, on: loop)
                    Issue.record("a replica accepted a write")
                } catch let error as RESPError {
                    #expect(error.kind == .unavailable && error.reply == "READONLY" && error.command == "SET", "\(error)")
                    #expect(!error.message.contains("k"), "\(error.message)")
                }
                #expect(client.isReachable == false)
                #expect(try await Self.send(admin, RESPCommand("REPLICAOF", "NO", "ONE")) == .simpleString("OK"))
                #expect(try await Self.eventually(client, set, on: loop) != nil)
                #expect(client.isReachable == true)
                // The command after -READONLY went out on a new connection.
                let connectionAfter = try await Self.send(client, RESPCommand("CLIENT", "ID"), on: loop)
                #expect(connectionAfter != connectionBefore, "\(connectionBefore) → \(connectionAfter)")
                for client in [client, admin] { await client.shutdown() }
            }
        }
    }

    @Test(
        "-LOADING, -MASTERDOWN, -NOAUTH: unavailable, the connection is dropped and the next command connects again",
        arguments: [
            "LOADING Redis is loading the dataset in memory", "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
            "NOAUTH Authentication required.",
        ])
    func connectionErrors(_ text: String) async throws {
        try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-\(text)\r\n" : "+PONG\r\n" }) { redis in
            let client = try Self.client(redis.url, timeout: .milliseconds(Int64(TestTiming.seconds(0.5) * 1000)))
            let loop = Self.group.next()
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "secret-key"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 1000)
            await #expect { try await Self.send(client, set, on: loop) } throws: { Self.kind(of: $0) == .unavailable }
            #expect(client.isReachable == false)
            #expect(redis.connections == 1)
            // The next command that is not refused by the back-off reaches a new connection.
            #expect(try await Self.eventually(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(redis.connections == 2)
            await client.shutdown()
        }
    }

    @Test("fifty pipelined commands refused together by -LOADING: one back-off step (100 ms), not one per command")
    func oneBackoffPerDroppedConnection() async throws {
        try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-LOADING Redis is loading the dataset in memory\r\n" : "+PONG\r\n" })
        { redis in
            let client = try Self.client(redis.url)
            let loop = Self.group.next()
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 1000)
            let results = try await loop.flatSubmit {
                EventLoopFuture.whenAllComplete((0..<50).map { _ in client.send(set, on: loop) }, on: loop)
            }.get()
            #expect(results.allSatisfy { if case .failure(let error) = $0 { Self.kind(of: error) == .unavailable } else { false } })
            // Fifty back-off steps would be the 2 s maximum; one is 100 ms.
            try await Task.sleep(for: .milliseconds(400))
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(redis.connections == 2)
            await client.shutdown()
        }
    }

    @Test("an unknown command or syntax: unsupported, with the error's first word only (Redis quotes arguments); the connection stays")
    func unsupported() async throws {
        try await ScriptedRedis.with(reply: { command in
            command.first?.uppercased() == "SET" ? "-ERR unknown command 'SET', with args beginning with: '\(command[1])' \r\n" : "+PONG\r\n"
        }) { redis in
            let client = try Self.client(redis.url)
            let loop = Self.group.next()
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "secret-key"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 1000)
            do {
                _ = try await Self.send(client, set, on: loop)
                Issue.record("an unknown command succeeded")
            } catch let error as RESPError {
                #expect(error.kind == .unsupported && error.reply == "ERR" && error.command == "SET", "\(error)")
                #expect(!error.description.contains("secret-key"), "\(error)")
            }
            #expect(client.isReachable == false)
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(redis.connections == 1)
            await client.shutdown()
        }
        // Redis's own words for a syntax it does not know (what Redis < 2.6.12 answers to NX PX).
        #expect(RESPError(replying: "ERR syntax error", to: "SET").kind == .unsupported)
        #expect(RESPError(replying: "ERR wrong number of arguments for 'set' command", to: "SET").kind == .unsupported)
        #expect(RESPError(replying: "ERR DB index is out of range", to: "SELECT").kind == .server)
    }

    @Test("any other error reply (-OOM): server, the store counts as down, the connection stays")
    func serverError() async throws {
        try await ScriptedRedis.with(reply: {
            $0.first?.uppercased() == "SET" ? "-OOM command not allowed when used memory > 'maxmemory'.\r\n" : "+PONG\r\n"
        }) { redis in
            let client = try Self.client(redis.url)
            let loop = Self.group.next()
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(client.isReachable == true)
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 1000)
            await #expect { try await Self.send(client, set, on: loop) } throws: {
                Self.kind(of: $0) == .server && (($0 as? RESPError)?.reply == "OOM")
            }
            #expect(client.isReachable == false)
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(redis.connections == 1)
            await client.shutdown()
        }
    }

    @Test("a reply SET NX cannot have (an integer): protocol, and the connection is dropped")
    func unexpectedReply() async throws {
        try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? ":1\r\n" : "+PONG\r\n" }) { redis in
            let client = try Self.client(redis.url)
            let loop = Self.group.next()
            let set = RESPCommand.setIfAbsent(key: ByteBuffer(string: "k"), value: ByteBuffer(string: "1"), expiresInMilliseconds: 1000)
            await #expect { try await Self.send(client, set, on: loop) } throws: { Self.kind(of: $0) == .protocol }
            #expect(client.isReachable == false)
            #expect(try await Self.send(client, .ping, on: loop) == .simpleString("PONG"))
            #expect(redis.connections == 2)
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
            // No password where one is needed: -NOAUTH, which drops the connection.
            let none = try Self.client(redis.url)
            await #expect { try await Self.send(none, RESPCommand("GET", "where")) } throws: { Self.kind(of: $0) == .unavailable }
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
            let client = try Self.client(redis.url, timeout: .milliseconds(Int64(TestTiming.seconds(0.5) * 1000)))
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
        let (certificate, key) = try RedisServerProcess.selfSignedCertificate(in: directory)
        try await RedisServerProcess.with(tls: (certificate, key)) { redis in
            let url = try RedisURL(parsing: "rediss://127.0.0.1:\(redis.port)")
            let trusting = try RESPClient(
                url: url, eventLoopGroup: Self.group, connectTimeout: .seconds(2), commandTimeout: .seconds(2),
                trustedCertificatesFile: certificate)
            #expect(try await Self.send(trusting, .ping) == .simpleString("PONG"))
            let systemRoots = try RESPClient(url: url, eventLoopGroup: Self.group, connectTimeout: .seconds(2), commandTimeout: .seconds(2))
            await #expect(throws: RESPError.self) { try await Self.send(systemRoots, .ping) }
            let plain = try Self.client("redis://127.0.0.1:\(redis.port)", timeout: .milliseconds(Int64(TestTiming.seconds(0.5) * 1000)))
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
