import Crypto
import Logging
import NIOCore
import RESP
import SAMLEncoding
import ServerSupport
import Synchronization

/// The exchange throttle's buckets kept in the shared replay store's Redis
/// (`throttle-store: shared`), so that replicas behind a balancer count a client once: with a
/// bucket per replica, N replicas let a client through N times the rate.
///
/// One `EVALSHA` a request: a Lua script takes a token atomically on Redis, on Redis's clock
/// (`TIME`), so replicas with drifting clocks cannot refill a bucket between them. The script is
/// sent by its SHA-1 rather than whole (`EVAL`): 40 bytes a request instead of the script. The key
/// is `samlgate:throttle:` and the SHA-256 of the client's address: no address is stored in the
/// clear. The bucket expires once it would be full again.
///
/// **Fails open**: when Redis cannot answer (down, slow, refusing) the request goes on, counted
/// in `samlgate_throttle_store_unavailable_total` and logged at most once a second — throttling
/// must not turn a Redis outage into refused sign-ins. A Redis that refuses the script itself
/// (an ACL without it, no scripting) would leave the throttle off until someone changes its
/// configuration, so that is refused at start-up (``checkAtStartUp(on:)``), and at run time
/// logged as an error, counted as `refused` and shown by `/readyz` (``refusal``).
final class SharedThrottle: Sendable {
    let limit: ThrottleRate
    private let client: RESPClient
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let warnings = WarningThrottle()
    /// The error of a refused script, at most once a second (every exchange meets it).
    private let refusalErrors = WarningThrottle()
    /// Whether the last script call was refused. Every answered call reads it (one atomic load),
    /// and only takes ``refusalReply``'s lock when there is a refusal to clear.
    private let degraded = Atomic<Bool>(false)
    /// Redis's error word of that refusal (`NOPERM`, `ERR`, …).
    private let refusalReply = Mutex<String?>(nil)

    static let keyPrefix = "samlgate:throttle:"

    /// The start-up probe's key: inside the prefix an ACL grants the throttle, and never a
    /// client's (those end in 64 hex digits).
    static let probeKey = keyPrefix + "probe"

    /// KEYS[1] the bucket; ARGV[1] tokens a second, ARGV[2] the bucket's size. Returns the
    /// seconds until the next token as a string (`0` when one was taken): a Lua number would be
    /// cut to an integer on its way out.
    static let script = """
        local rate = tonumber(ARGV[1])
        local size = tonumber(ARGV[2])
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
        local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens = tonumber(held[1]) or size
        local at = tonumber(held[2]) or now
        if now > at then
          tokens = math.min(size, tokens + (now - at) * rate)
          at = now
        end
        local wait = 0
        if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
        redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
        redis.call('PEXPIRE', KEYS[1], math.ceil((size - tokens) / rate * 1000) + 1000)
        return tostring(wait)
        """

    /// The name Redis caches ``script`` under: the hex SHA-1 of its bytes, as `SCRIPT LOAD`
    /// answers it.
    static let scriptSHA1 = HexDigits.lowercase(Insecure.SHA1.hash(data: Array(script.utf8)))
    private static let scriptSHA1Bytes = ByteBuffer(string: scriptSHA1)

    /// `SCRIPT LOAD` of ``script``: answered with its SHA-1.
    static let load = RESPCommand(
        [ByteBuffer(string: "SCRIPT"), ByteBuffer(string: "LOAD"), ByteBuffer(string: script)],
        replyTypes: [.bulkString, .error],
        acceptsReply: { reply in
            if case .bulkString = reply { return true }
            return false
        })

    /// The error replies that pass by themselves — out of memory, another script running too
    /// long, a failed snapshot refusing writes —: Redis unable to run the script for now, not
    /// refusing it.
    static let passingReplies: Set<String> = ["OOM", "BUSY", "MISCONF"]

    /// What an exchange's call needs of Redis besides Redis 5 with scripting, as the rules of
    /// the gateway's ACL user: the script's own commands count too, since Redis checks every
    /// `redis.call` against the caller's ACL.
    static let aclRules = "~samlgate:throttle:* +evalsha +script|load +time +hmget +hset +pexpire"

    init(limit: ThrottleRate, client: RESPClient, metrics: GatewayMetrics, logger: Logger) {
        self.limit = limit
        self.client = client
        self.metrics = metrics
        self.logger = logger
    }

    /// Takes a token for `client` on Redis: the seconds until its next token, or `nil` when it
    /// may go on — also when Redis could not answer or refused the script.
    func take(_ client: ClientKey, on eventLoop: any EventLoop) -> EventLoopFuture<Double?> {
        var address = [UInt8]()
        withUnsafeBytes(of: client.high.bigEndian) { address.append(contentsOf: $0) }
        withUnsafeBytes(of: client.low.bigEndian) { address.append(contentsOf: $0) }
        let key = Self.keyPrefix + HexDigits.lowercase(SHA256.hash(data: address))
        let command = Self.evaluation(key: key, rate: String(limit.rate), size: String(limit.burst + 1))
        return evaluate(command, on: eventLoop).map { reply -> Double? in
            guard case .bulkString(let text) = reply, let wait = Double(String(buffer: text)), wait.isFinite, wait >= 0 else {
                return self.failed(RESPError(.protocol, "unexpected reply to the throttle script"))
            }
            self.answered()
            return wait > 0 ? wait : nil
        }.recover { error in
            self.failed((error as? RESPError) ?? RESPError(.closed, "\(error)"))
        }
    }

    /// `EVALSHA` of ``script`` on `key`.
    static func evaluation(key: String, rate: String, size: String) -> RESPCommand {
        RESPCommand(
            [
                ByteBuffer(string: "EVALSHA"), scriptSHA1Bytes, ByteBuffer(string: "1"), ByteBuffer(string: key), ByteBuffer(string: rate),
                ByteBuffer(string: size),
            ],
            replyTypes: [.bulkString, .error],
            acceptsReply: { reply in
                if case .bulkString = reply { return true }
                return false
            })
    }

    /// Sends `command` (an ``evaluation(key:rate:size:)``); after `-NOSCRIPT` — a Redis that
    /// restarted or failed over to a replica that never loaded the script, or whose cache was
    /// flushed — loads the script and sends it once more, so the throttle comes back without a
    /// gateway restart. Call on `eventLoop`.
    private func evaluate(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        let client = self.client
        return client.send(command, on: eventLoop).flatMapError { error in
            guard (error as? RESPError)?.reply?.uppercased() == "NOSCRIPT" else { return eventLoop.makeFailedFuture(error) }
            return client.send(Self.load, on: eventLoop).flatMap { _ in client.send(command, on: eventLoop) }
        }
    }

    /// Redis's error word when `error` is Redis refusing the script itself — `-NOPERM` (an ACL
    /// without it or a command it calls), `-ERR` (a script error, or no scripting at all: an
    /// unknown command), `-WRONGTYPE`, `-NOSCRIPT` still after loading it — which no retry
    /// repairs; `nil` for an outage or a reply that passes (``passingReplies``), and for a
    /// refused login, which the replay store reports.
    static func scriptRefusal(_ error: RESPError) -> String? {
        guard error.kind == .server || error.kind == .unsupported, error.command == "EVALSHA" || error.command == "SCRIPT" else { return nil }
        let reply = error.reply?.uppercased() ?? "ERR"
        return passingReplies.contains(reply) ? nil : reply
    }

    /// Redis's error word while the last script call was refused (`/readyz` then reports the
    /// throttle `degraded`); `nil` once a call is answered again.
    var refusal: String? {
        guard degraded.load(ordering: .relaxed) else { return nil }
        return refusalReply.withLock { $0 }
    }

    /// A call was answered: a refusal reported until now is over.
    private func answered() {
        guard degraded.load(ordering: .relaxed) else { return }
        refusalReply.withLock { reply in
            reply = nil
            degraded.store(false, ordering: .relaxed)
        }
    }

    /// Redis did not take the token: the request goes on. A refusal of the script (``scriptRefusal(_:)``)
    /// lasts until someone changes Redis, with every exchange unthrottled meanwhile, so it is an
    /// error, counted as `refused`; anything else is an outage that passes, a warning counted by
    /// its kind. Logged at most once a second each; the key (a client's digest) never.
    private func failed(_ error: RESPError) -> Double? {
        if let reply = Self.scriptRefusal(error) {
            metrics.throttleStoreUnavailable(kind: "refused")
            refusalReply.withLock { stored in
                stored = reply
                degraded.store(true, ordering: .relaxed)
            }
            if let suppressed = refusalErrors.admit() {
                logger.error(
                    "throttle store refused the throttle script; exchanges go on unthrottled until the Redis user is allowed \(Self.aclRules)",
                    metadata: [
                        "code": "replay_store_unsupported", "command": .string(error.command ?? ""), "reply": .string(reply),
                        "suppressed": .stringConvertible(suppressed),
                    ])
            }
            return nil
        }
        metrics.throttleStoreUnavailable(kind: error.kind.rawValue)
        if let suppressed = warnings.admit() {
            logger.warning(
                "throttle store unavailable; exchanges go on unthrottled",
                metadata: ["kind": .string(error.kind.rawValue), "suppressed": .stringConvertible(suppressed)])
        }
        return nil
    }

    /// Before the gateway listens: the Redis version (`INFO server`, when the ACL allows it),
    /// then `SCRIPT LOAD` and one call of the script on ``probeKey``, as an exchange makes it.
    /// ``ThrottleStoreCheck/refused(_:)`` — the caller refuses to start — when Redis is older
    /// than 5 or refuses the script (``scriptRefusal(_:)``); ``ThrottleStoreCheck/unavailable(_:)``,
    /// logged as an error, when it cannot answer for now (the throttle fails open until it can).
    /// Never logs the password (the URL is shown masked).
    ///
    /// The probe's rate is negative, so the script's expiry comes out at 0 ms: `PEXPIRE 0`
    /// deletes the key as the script ends. The probe runs every command an exchange's call
    /// needs, on a key inside the throttle's prefix, and leaves nothing behind.
    func checkAtStartUp(on eventLoop: any EventLoop) async -> ThrottleStoreCheck {
        let url = client.url.description
        // Redis 4 and older refuse a write after `TIME` in a script (unless the script switches
        // to effects replication, the default from Redis 5): the probe would fail with a
        // script error; the version says why. An ACL that refuses INFO leaves it to the probe.
        if case .bulkString(let info)? = try? await client.submit(RESPCommand("INFO", "server"), on: eventLoop).get(),
            let version = Self.redisVersion(inInfo: String(buffer: info)), let major = Int(version.prefix(while: { $0 != "." })), major < 5
        {
            return .refused(
                "\(url) is Redis \(version): throttle-store: shared needs Redis 5 or later (its script writes after reading TIME); "
                    + "upgrade Redis or set throttle-store: memory")
        }
        do {
            _ = try await client.submit(Self.load, on: eventLoop).get()
            let reply = try await client.submit(Self.evaluation(key: Self.probeKey, rate: "-1", size: "1"), on: eventLoop).get()
            guard case .bulkString(let text) = reply, Double(String(buffer: text)) != nil else {
                return .refused("\(url) answered the throttle script with something else than a number: not the script the gateway loaded")
            }
            answered()
            logger.info("throttle store ready", metadata: ["replay_store": .string(url)])
            return .ready
        } catch {
            let error = (error as? RESPError) ?? RESPError(.closed, "\(error)")
            if let reply = Self.scriptRefusal(error) {
                return .refused(
                    "\(url) refused the throttle script (\(error.command ?? "EVALSHA") answered \(reply)): throttle-store: shared needs Redis 5 "
                        + "or later with scripting, and the gateway's Redis user allowed \(Self.aclRules) (ACL SETUSER <user> \(Self.aclRules)); "
                        + "or set throttle-store: memory")
            }
            let why = "Redis did not run the throttle script (\(error.kind.rawValue))"
            logger.error(
                "throttle store not usable at start-up; starting anyway, exchanges go on unthrottled until it is",
                metadata: [
                    "code": "replay_store_unavailable", "replay_store": .string(url), "reason": .string(error.kind.rawValue),
                    "reply": .string(error.reply ?? ""), "detail": .string(why),
                ])
            return .unavailable(why)
        }
    }

    /// `redis_version` of an `INFO server` reply.
    static func redisVersion(inInfo info: String) -> String? {
        let field = "redis_version:"
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(field) {
            return String(line.dropFirst(field.count))
        }
        return nil
    }
}

// MARK: - The start-up check

/// What the start-up check of the shared throttle found (``SharedThrottle/checkAtStartUp(on:)``):
/// its script loaded and run once, as every exchange will run it.
enum ThrottleStoreCheck: Sendable, Equatable {
    /// Redis ran the script.
    case ready
    /// Redis could not be asked, or could not run the script for now (down, unreachable, slow,
    /// out of memory, a rejected login): the gateway starts anyway — the throttle fails open —
    /// and exchanges are throttled again once Redis answers. The reason was logged.
    case unavailable(String)
    /// Redis answered and refuses the script (an ACL without it, no scripting, older than 5):
    /// every exchange would go unthrottled until the configuration changes, so the gateway
    /// refuses to start. The text says why and what to allow, without the password.
    case refused(String)
}
