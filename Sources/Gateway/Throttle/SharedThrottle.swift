import Crypto
import Logging
import NIOCore
import RESP
import SAMLEncoding
import ServerSupport

/// The exchange throttle's buckets kept in the shared replay store's Redis
/// (`throttle-store: shared`), so that replicas behind a balancer count a client once: with a
/// bucket per replica, N replicas let a client through N times the rate.
///
/// One `EVAL` a request: a Lua script takes a token atomically on Redis, on Redis's clock
/// (`TIME`), so replicas with drifting clocks cannot refill a bucket between them. The key is
/// `samlgate:throttle:` and the SHA-256 of the client's address: no address is stored in the
/// clear. The bucket expires once it would be full again.
///
/// **Fails open**: when Redis cannot answer (down, slow, refusing) the request goes on, counted
/// in `samlgate_throttle_store_unavailable_total` and logged at most once a second — throttling
/// must not turn a Redis outage into refused sign-ins.
final class SharedThrottle: Sendable {
    let limit: ThrottleRate
    private let client: RESPClient
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let warnings = WarningThrottle()

    static let keyPrefix = "samlgate:throttle:"

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

    init(limit: ThrottleRate, client: RESPClient, metrics: GatewayMetrics, logger: Logger) {
        self.limit = limit
        self.client = client
        self.metrics = metrics
        self.logger = logger
    }

    /// Takes a token for `client` on Redis: the seconds until its next token, or `nil` when it
    /// may go on — also when Redis could not answer.
    func take(_ client: ClientKey, on eventLoop: any EventLoop) -> EventLoopFuture<Double?> {
        var address = [UInt8]()
        withUnsafeBytes(of: client.high.bigEndian) { address.append(contentsOf: $0) }
        withUnsafeBytes(of: client.low.bigEndian) { address.append(contentsOf: $0) }
        let key = Self.keyPrefix + HexDigits.lowercase(SHA256.hash(data: address))
        let command = RESPCommand(
            [
                ByteBuffer(string: "EVAL"), ByteBuffer(string: Self.script), ByteBuffer(string: "1"), ByteBuffer(string: key),
                ByteBuffer(string: String(limit.rate)), ByteBuffer(string: String(limit.burst + 1)),
            ],
            replyTypes: [.bulkString, .error],
            acceptsReply: { reply in
                if case .bulkString = reply { return true }
                return false
            })
        return self.client.send(command, on: eventLoop).map { reply -> Double? in
            guard case .bulkString(let text) = reply, let wait = Double(String(buffer: text)), wait.isFinite, wait >= 0 else {
                return self.unavailable(RESPError(.protocol, "unexpected reply to the throttle script"))
            }
            return wait > 0 ? wait : nil
        }.recover { error in
            self.unavailable((error as? RESPError) ?? RESPError(.closed, "\(error)"))
        }
    }

    /// Redis could not answer: the request goes on.
    private func unavailable(_ error: RESPError) -> Double? {
        metrics.throttleStoreUnavailable(kind: error.kind.rawValue)
        if let suppressed = warnings.admit() {
            logger.warning(
                "throttle store unavailable; exchanges go on unthrottled",
                metadata: ["kind": .string(error.kind.rawValue), "suppressed": .stringConvertible(suppressed)])
        }
        return nil
    }
}
