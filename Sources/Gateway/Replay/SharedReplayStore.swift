// The shared replay store: the store itself, its start-up check, and the settings that choose it
// (`replay-store`) and say what an exchange does when it cannot answer (`replay-store-failure`).

import Dispatch
import Foundation
import Logging
import NIOCore
import RESP
import SAMLVerification
import ServerSupport
import Synchronization

/// Replay protection shared by every replica: one atomic `SET <key> 1 NX PX <lifetime>` per
/// exchange on a Redis all replicas use, so of two replicas racing on the same assertion only
/// one can record it. The lifetime is computed on the gateway's clock (the assertion's
/// `NotOnOrAfter` plus the skew, minus now): an absolute `PXAT` would be read on Redis's clock,
/// and a Redis clock ahead of the gateway's would end the record early — a replay window.
///
/// Asked on the event loop of the client's connection, after the workers verified the response
/// and before anything is forwarded: the round trip to Redis never holds a worker thread.
/// The key is a SHA-256 of the signed issuer and the assertion ID (``ReplayClaim/key``), so
/// Redis holds nothing readable about the assertion; it expires with the assertion.
package final class SharedReplayStore: Sendable {
    static let keyPrefix = "samlgate:replay:"
    /// `Retry-After` of `replay_store_unavailable`.
    static let retrySeconds = 1

    /// The key of the start-up check's (and `/readyz`'s) probe: under the replay prefix, so an
    /// ACL limited to `samlgate:replay:*` allows it, and never a real record's (those end in 64
    /// hex digits).
    static let probeKey = keyPrefix + "probe"

    package let client: RESPClient
    let failurePolicy: ReplayStoreFailurePolicy
    /// `WAIT` after each record (`replay-store-replicas`; `nil`: none): the replicas that must
    /// confirm it, and how long to wait for them.
    let replicaConfirmation: (replicas: Int, milliseconds: Int)?
    /// Whether the last `WAIT` came back short (a usable reply, yet a store that cannot keep
    /// the exchanges' records): `/readyz` says `down` until one is confirmed again.
    private let replicasShort = Atomic<Bool>(false)
    let metrics: GatewayMetrics
    let logger: Logger
    let eventLoopGroup: any EventLoopGroup
    /// The `replay-store-failure: open` warning, at most once a second (an outage would
    /// otherwise log one line per exchange).
    let openWarnings = WarningThrottle()
    /// The `replay_store_unsupported` error of a cluster node at run time, at most once a second.
    let clusterErrors = WarningThrottle()

    init(
        url: RedisURL, configuration: GatewayConfiguration, metrics: GatewayMetrics, logger: Logger,
        eventLoopGroup: any EventLoopGroup
    ) throws(ConfigurationError) {
        let timeout = TimeAmount(seconds: configuration.replayStoreTimeout)
        var events = RESPTopologyEvents()
        events.primarySwitched = { [logger, metrics] before, after in
            // A failover followed (or the first primary the Sentinels name): one line each.
            if before != nil { metrics.replayStoreFailover() }
            logger.notice(
                before == nil ? "replay store primary named by Sentinel" : "replay store primary moved: failover followed",
                metadata: [
                    "code": "replay_store_failover", "replay_store": .string(url.description), "from": .string(before?.description ?? ""),
                    "to": .string(after.description),
                ])
        }
        events.redirected = { [metrics] ask in metrics.replayStoreRedirect(ask: ask) }
        events.mapRefreshed = { [metrics] in metrics.replayStoreTopologyRefresh() }
        do {
            client = try RESPClient(
                url: url, eventLoopGroup: eventLoopGroup, connectionsPerLoop: configuration.replayStoreConnections,
                connectTimeout: timeout, commandTimeout: timeout, trustedCertificatesFile: configuration.replayStoreCA, events: events)
        } catch {
            throw ConfigurationError(
                "replay-store: TLS to Redis cannot be set up (replay-store-ca: \(configuration.replayStoreCA ?? "system roots")): \(error)")
        }
        failurePolicy = configuration.replayStoreFailure
        replicaConfirmation =
            configuration.replayStoreReplicas > 0
            ? (configuration.replayStoreReplicas, Int((configuration.replayStoreReplicaWait * 1000).rounded(.up))) : nil
        self.metrics = metrics
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
    }

    /// Records `claim` unless it is recorded already. Succeeds with `nil` when the exchange may
    /// go on, or with the refusal to answer (`replayed`; `replay_store_unavailable` when the
    /// store cannot answer and the policy is `closed`). Anything but `+OK` or a null reply —
    /// an error reply, a timeout, a closed connection — is the store not answering. Call on
    /// `eventLoop`; never fails.
    /// - Parameter digest: ``AuditDigest/assertion(_:)`` of `claim` when the worker made it
    ///   already (for the audit trail): not hashed a second time on the event loop.
    func admit(_ claim: ReplayClaim, digest: String? = nil, on eventLoop: any EventLoop) -> EventLoopFuture<GatewayError?> {
        let started = DispatchTime.now().uptimeNanoseconds
        let key = Self.key(for: claim, digest: digest)
        let command = record(key, milliseconds: Self.lifetimeMilliseconds(until: claim.expiresAt, now: Date()))
        return client.send(command, on: eventLoop).map { reply -> GatewayError? in
            switch self.outcome(of: reply) {
            case .recorded:
                self.metrics.replayStoreLatency(nanos: DispatchTime.now().uptimeNanoseconds - started)
                return nil
            case .existed:
                self.metrics.replayStoreLatency(nanos: DispatchTime.now().uptimeNanoseconds - started)
                return GatewayError(VerificationError(.replayed, "this assertion was already used"))
            case .unreplicated(let confirmed):
                let refusal = self.unavailable(self.shortfall(confirmed, of: "the record"))
                // Refused, the record must not stay: the client's retry would be taken for a replay.
                if refusal != nil { _ = self.client.send(RESPCommand([ByteBuffer(string: "DEL"), key]), on: eventLoop) }
                return refusal
            case nil:
                return self.unavailable(RESPError(.protocol, "unexpected reply to SET NX"))
            }
        }.recover { error in
            self.unavailable((error as? RESPError) ?? RESPError(.closed, "\(error)"))
        }
    }

    /// `SET key 1 NX PX milliseconds`, followed by `WAIT` on the same connection when replicas
    /// must confirm it.
    private func record(_ key: ByteBuffer, milliseconds: Int64) -> RESPCommand {
        let set = RESPCommand.setIfAbsent(key: key, value: ByteBuffer(string: "1"), expiresInMilliseconds: milliseconds)
        guard let replicaConfirmation else { return set }
        return set.followed(by: .waitForReplicas(replicaConfirmation.replicas, milliseconds: replicaConfirmation.milliseconds))
    }

    /// A record fewer replicas confirmed than `replay-store-replicas` asks.
    private func shortfall(_ confirmed: Int64, of what: String) -> RESPError {
        RESPError(.unreplicated, "\(confirmed) of \(replicaConfirmation?.replicas ?? 0) replicas confirmed \(what) in time", command: "WAIT")
    }

    /// What a record's reply says.
    private enum Outcome {
        case recorded, existed
        /// Set on the primary, but only this many replicas confirmed it.
        case unreplicated(Int64)
    }

    /// `+OK` / null, or `[+OK or null, replicas]` after `WAIT`; `nil` for any other reply.
    private func outcome(of reply: RESPValue) -> Outcome? {
        switch reply {
        case .simpleString("OK"): return .recorded
        case .null: return .existed
        case .array(let replies) where replies.count == 2:
            guard let replicaConfirmation else { return nil }
            let confirmed: Int64
            switch replies[1] {
            case .integer(let count): confirmed = count
            case .error: confirmed = 0  // WAIT refused or unanswered: nothing confirmed
            default: return nil
            }
            switch replies[0] {
            case .null:
                return .existed
            case .simpleString("OK"):
                let short = confirmed < replicaConfirmation.replicas
                replicasShort.store(short, ordering: .relaxed)
                return short ? .unreplicated(confirmed) : .recorded
            default:
                return nil
            }
        default: return nil
        }
    }

    /// The store could not answer: counted by kind, then refused or accepted by the policy.
    ///
    /// A Redis Cluster's refusal that outlived the redirects followed (``RESPError/Kind/cluster``:
    /// `-CLUSTERDOWN`, `-TRYAGAIN` in a migration, more than five redirects) is refused whatever
    /// the policy: a cluster answering for its slots is not an outage, and `open` would accept the
    /// replays of every key it is unsure of. It gets the closed policy's answer and an error log
    /// with code `replay_store_unsupported` (at most one a second).
    private func unavailable(_ error: RESPError) -> GatewayError? {
        metrics.replayStoreError(kind: error.kind.rawValue)
        if error.kind == .cluster {
            if let suppressed = clusterErrors.admit() {
                logger.error(
                    "replay store: the Redis Cluster refused the command (down, a slot in migration, or redirects without end)",
                    metadata: [
                        "code": "replay_store_unsupported", "reply": .string(error.reply ?? ""),
                        "suppressed": .stringConvertible(suppressed),
                    ])
            }
            return .replayStoreUnavailable(error)
        }
        switch failurePolicy {
        case .closed:
            return .replayStoreUnavailable(error)
        case .open:
            metrics.replayStoreUnrecorded()
            // The reason only: nothing about the assertion or the client. At most one line a
            // second; the counter above has every one.
            if let suppressed = openWarnings.admit() {
                var metadata: Logger.Metadata = [
                    "code": "replay_store_unavailable", "reason": .string(error.kind.rawValue),
                    "suppressed": .stringConvertible(suppressed),
                ]
                if let reply = error.reply { metadata["reply"] = .string(reply) }
                logger.warning("replay store unavailable; assertion accepted unrecorded (replay-store-failure: open)", metadata: metadata)
            }
            return nil
        }
    }

    /// The probe `/readyz` and the start-up check send: the exchanges' own command shape on
    /// ``probeKey``, living one second, so that `up` means what an exchange needs (a writable
    /// primary that knows `SET … NX PX`), not merely that Redis answers `PING`.
    var probe: RESPCommand { record(ByteBuffer(string: Self.probeKey), milliseconds: 1000) }

    /// Sends ``probe``; fails as an exchange would (a short `WAIT` is ``RESPError/Kind/unreplicated``).
    private func sendProbe(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        client.submit(probe, on: eventLoop).flatMapThrowing { reply in
            switch self.outcome(of: reply) {
            case .recorded?, .existed?: return
            case .unreplicated(let confirmed)?:
                throw self.shortfall(confirmed, of: "the probe")
            case nil: throw RESPError(.protocol, "unexpected reply to SET NX")
            }
        }
    }

    /// Connects, logs in and sends ``probe`` once, at start-up, and logs what it found:
    /// ``ReplayStoreCheck/unsupported(_:)`` when Redis rejects the command or the database
    /// (retrying cannot help: the caller refuses to start), ``ReplayStoreCheck/unavailable(_:)``
    /// (logged as an error with code `replay_store_unavailable`) when it cannot answer for now.
    /// Never logs the password (the URL is shown masked).
    package func checkAtStartUp() async -> ReplayStoreCheck {
        let url = client.url.description
        do {
            try await sendProbe(on: eventLoopGroup.next()).get()
            // The probe's key may be one this node owns: a cluster node says so in INFO. A Redis
            // whose ACL refuses INFO is taken at its word (a redirect at run time is followed then),
            // and probed again, so that the refusal does not leave the store reported down.
            switch try? await client.submit(RESPCommand("INFO", "cluster"), on: eventLoopGroup.next()).get() {
            case .bulkString(let info)? where String(buffer: info).contains("cluster_enabled:1"):
                // A Redis Cluster: routed by hash slot, once its map covers every slot.
                switch await client.enableCluster(on: eventLoopGroup.next()) {
                case 0?: break
                case let uncovered?:
                    return .unsupported("\(url) is a Redis Cluster with \(uncovered) of 16384 hash slots served by no primary")
                case nil:
                    return .unsupported("\(url) is a Redis Cluster node, and no node answered CLUSTER SLOTS")
                }
            case .bulkString?: break
            default: try? await sendProbe(on: eventLoopGroup.next()).get()
            }
            logger.info("replay store ready", metadata: ["replay_store": .string(url), "cluster": .stringConvertible(client.isCluster)])
            return .ready
        } catch {
            let error = (error as? RESPError) ?? RESPError(.closed, "\(error)")
            let reply = error.reply.map { " (\($0))" } ?? ""
            switch (error.kind, error.command) {
            case (.unsupported, "SENTINEL"?):
                // Sentinels answered, and none knows the primary by that name (or none is a Sentinel).
                return .unsupported("\(url): \(error.message)")
            case (.cluster, _):
                return .unsupported(
                    "\(url) is a Redis Cluster that refused the probe (\(error.reply ?? "CLUSTERDOWN")): not every hash slot is served")
            case (.unsupported, let command?):
                let needs = command == "SET" ? "; the replay store sends SET key 1 NX PX <ms>, which needs Redis 2.6.12 or later" : ""
                return .unsupported("\(url) rejected \(command) as an unknown command or syntax\(reply)\(needs)")
            case (.server, "SELECT"?):
                return .unsupported(
                    "\(url) refused SELECT \(client.url.database)\(reply): the database does not exist there (or Redis runs in cluster mode)")
            default:
                let why: String
                switch error.kind {
                case .server where error.command == "SENTINEL AUTH": why = error.message
                // Which Sentinels were tried (the message names them all).
                case .connect where client.url.sentinel != nil: why = error.message
                case .server where error.command == "AUTH": why = "Redis refused the login\(reply): check the user and password in replay-store"
                case .unavailable where error.reply?.uppercased() == "NOAUTH": why = "Redis wants a password\(reply): add it to replay-store"
                case .unavailable: why = "Redis cannot take writes now\(reply): a replica (replay-store must name the primary), or loading its data"
                case .unreplicated:
                    why =
                        "\(error.message) (replay-store-replicas): replicas down, lagging, or fewer than asked; check INFO replication on the primary"
                case .server: why = "Redis refused the command\(reply)"
                default: why = "Redis did not answer (\(error.kind.rawValue))"
                }
                logger.error(
                    "replay store not usable at start-up; starting anyway, replay-store-failure applies until it is",
                    metadata: [
                        "code": "replay_store_unavailable", "replay_store": .string(url), "reason": .string(error.kind.rawValue),
                        "reply": .string(error.reply ?? ""), "policy": .string(failurePolicy.rawValue), "detail": .string(why),
                    ])
                return .unavailable(why)
            }
        }
    }

    /// The store's layout for `/readyz`: `single`, `sentinel` or `cluster`, and what it names
    /// (the primary the Sentinels last named; the cluster's primaries and uncovered slots).
    func addTopology(to body: inout JSONLine) {
        switch client.topology {
        case .single:
            body.add("replayStoreTopology", "single")
        case .sentinel(let primary):
            body.add("replayStoreTopology", "sentinel")
            if let primary { body.add("replayStorePrimary", primary.description) }
        case .cluster(let primaries, let uncoveredSlots):
            body.add("replayStoreTopology", "cluster")
            body.add("replayStorePrimaries", primaries)
            body.add("replayStoreUncoveredSlots", uncoveredSlots)
        }
    }

    /// Whether the last command got a usable reply, without probing: `samlgate_replay_store_up`
    /// (nothing asked yet counts as not up).
    var isUp: Bool { client.isReachable == true && !replicasShort.load(ordering: .relaxed) }

    /// `up`, `down` or `unknown` (nothing asked yet), for `/readyz`: whether the last command got
    /// a usable reply (an error reply is `down`). When not `up`, ``probe`` goes out on
    /// `eventLoop` so that a Redis back from an outage is noticed without an exchange — the
    /// exchanges' own command, so a Redis that answers `PING` but refuses writes stays `down`.
    func readiness(probingOn eventLoop: any EventLoop) -> String {
        let reachable = replicasShort.load(ordering: .relaxed) ? false : client.isReachable
        if reachable != true { _ = sendProbe(on: eventLoop) }
        switch reachable {
        case true?: return "up"
        case false?: return "down"
        case nil: return "unknown"
        }
    }

    /// `samlgate:replay:` and the hex SHA-256 of the claim's key (`digest`, when already made).
    static func key(for claim: ReplayClaim, digest: String? = nil) -> ByteBuffer {
        // The audit trail's `assertion` is the same digest: a line and a record can be matched.
        ByteBuffer(string: keyPrefix + (digest ?? AuditDigest.assertion(claim)))
    }

    /// Milliseconds from `now` until `expiry` on the gateway's clock, rounded up (the record
    /// never ends before the assertion could be refused anyway), at least 1 (`PX 0` is an error
    /// in Redis) and at most a year (a bound for the conversion; assertions live minutes).
    static func lifetimeMilliseconds(until expiry: Date, now: Date) -> Int64 {
        let milliseconds = (expiry.timeIntervalSince(now) * 1000).rounded(.up)
        guard milliseconds >= 1 else { return 1 }
        return Int64(min(milliseconds, 365 * 86_400_000))
    }

    func shutdown() async {
        await client.shutdown()
    }
}

// MARK: - The start-up check

/// What the start-up check of the shared replay store found (``SharedReplayStore/checkAtStartUp()``):
/// one `SET … NX PX` after the login, as every exchange will send it.
package enum ReplayStoreCheck: Sendable, Equatable {
    /// Redis took the login (AUTH, SELECT) and the command.
    case ready
    /// Redis could not be asked, or refused for reasons that may pass (down, unreachable, slow,
    /// a replica, loading, a rejected password, out of memory): the gateway starts anyway —
    /// pass-through does not need Redis — and `replay-store-failure` answers the exchanges
    /// until Redis works. The reason was logged.
    case unavailable(String)
    /// Redis answered and rejected what the gateway sends (an unknown command or syntax — a
    /// Redis older than 2.6.12, or not Redis —, or a database SELECT refuses): every exchange
    /// would be refused or go unrecorded until the configuration changes, so `serve` refuses
    /// to start. The text says why, without the password.
    case unsupported(String)
}

// MARK: - Settings

/// Where accepted assertion ids are recorded (setting `replay-store`).
package enum ReplayStoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// In this process (``SAMLVerification/InMemoryReplayCache``): right for one process only;
    /// a second replica would accept an assertion replayed to it.
    case memory
    /// A Redis server every replica shares (``SharedReplayStore``).
    case redis(RedisURL)

    /// `memory`, or the URL with its password masked.
    package var description: String {
        switch self {
        case .memory: "memory"
        case .redis(let url): url.description
        }
    }
}

/// What an exchange does when the shared replay store cannot answer (setting
/// `replay-store-failure`): Redis down, unreachable, or slower than `replay-store-timeout`.
package enum ReplayStoreFailurePolicy: String, Sendable, CaseIterable {
    /// Refuse: `503 replay_store_unavailable` with `Retry-After`, nothing forwarded. No
    /// assertion is ever accepted without being recorded.
    case closed
    /// Accept unrecorded: the exchange goes on, counted in
    /// `samlgate_replay_store_unrecorded_total` and logged as a warning. An assertion accepted
    /// this way can be replayed until it expires.
    case open
}
