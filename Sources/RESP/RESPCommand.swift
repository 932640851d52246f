// What the client sends Redis, and why a command got no usable reply.

import NIOCore

/// A command as RESP sends it: an array of bulk strings. Built once, written as is; the
/// arguments are bytes, never logged.
package struct RESPCommand: Sendable {
    package let arguments: [ByteBuffer]
    /// The replies this command can have, when it says (`nil`: any). Any other reply means the
    /// connection is out of step with its commands or the server is not what it claims: the
    /// command fails with ``RESPError/Kind/protocol`` and the connection is dropped.
    package let acceptsReply: (@Sendable (RESPValue) -> Bool)?
    /// The reply types this command can be answered with, checked by the decoder on the reply's
    /// first byte (``RESPValueDecoder``): another type fails the command with
    /// ``RESPError/Kind/protocol`` before anything of the reply is buffered.
    package let replyTypes: RESPReplyTypes
    /// Commands sent right after this one on the same connection (``followed(by:)``); when
    /// there are any, the reply is an array of this command's reply and then theirs.
    package private(set) var followers: [RESPCommand] = []

    /// - Parameter replyTypes: `nil`: ``replyTypes(of:)`` for the command's name.
    package init(_ arguments: [ByteBuffer], replyTypes: RESPReplyTypes? = nil, acceptsReply: (@Sendable (RESPValue) -> Bool)? = nil) {
        precondition(!arguments.isEmpty, "a command has a name")
        self.arguments = arguments
        self.replyTypes = replyTypes ?? Self.replyTypes(of: String(buffer: arguments[0]))
        self.acceptsReply = acceptsReply
    }

    /// What the commands this client sends itself can be answered with: `AUTH`, `SELECT` and
    /// `PING` (without an argument) a status or an error; `SET` (with `NX`, or `GET`) also a bulk
    /// string or its null. None of them answers with an array, so an array for one of them is a
    /// server out of step or hostile. Any other command: any type.
    package static func replyTypes(of name: String) -> RESPReplyTypes {
        switch name.uppercased() {
        case "AUTH", "SELECT", "PING": [.simpleString, .error]
        case "SET": [.simpleString, .error, .bulkString]
        default: .any
        }
    }

    package init(_ arguments: String...) {
        self.init(arguments.map { ByteBuffer(string: $0) })
    }

    /// `*<n>\r\n` then `$<len>\r\n<bytes>\r\n` per argument.
    package func write(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "*"))
        buffer.writeString(String(arguments.count))
        buffer.writeStaticString("\r\n")
        for argument in arguments {
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeString(String(argument.readableBytes))
            buffer.writeStaticString("\r\n")
            buffer.writeImmutableBuffer(argument)
            buffer.writeStaticString("\r\n")
        }
    }

    /// `SET key value NX PX ms`: records `key` for `milliseconds` (at least 1) unless it exists.
    /// Redis answers `+OK` when it set the key, a null bulk string when it existed; anything
    /// else fails the command as a protocol error.
    ///
    /// A lifetime rather than an instant (`PXAT`): an instant is read on Redis's clock, so a
    /// Redis clock ahead of the sender's would end the record early and reopen a replay window;
    /// a lifetime counts on Redis from when the command arrives, and only the sender's clock
    /// decides how long. It also needs only Redis ≥ 2.6.12 (`PXAT` needs 6.2).
    package static func setIfAbsent(key: ByteBuffer, value: ByteBuffer, expiresInMilliseconds: Int64) -> RESPCommand {
        RESPCommand(
            [
                ByteBuffer(string: "SET"), key, value, ByteBuffer(string: "NX"), ByteBuffer(string: "PX"),
                ByteBuffer(string: String(max(1, expiresInMilliseconds))),
            ],
            replyTypes: [.simpleString, .error, .bulkString],
            acceptsReply: { reply in reply == .simpleString("OK") || reply == .null })
    }

    package static let ping = RESPCommand("PING")

    /// This command with `commands` sent right after it on the same connection, wherever it is
    /// routed or redirected: `WAIT` counts the replicas that have *this connection's* writes,
    /// so it means nothing on another. The reply becomes an array, this command's reply first;
    /// an error reply to any of them fails the whole.
    package func followed(by commands: RESPCommand...) -> RESPCommand {
        var command = self
        command.followers += commands
        return command
    }

    /// `WAIT replicas timeout`: answers (an integer) how many replicas have acknowledged the
    /// writes made on this connection so far, once `replicas` have or after `milliseconds`.
    package static func waitForReplicas(_ replicas: Int, milliseconds: Int) -> RESPCommand {
        RESPCommand(
            [ByteBuffer(string: "WAIT"), ByteBuffer(string: String(replicas)), ByteBuffer(string: String(max(1, milliseconds)))],
            replyTypes: [.integer, .error])
    }
}

// MARK: - Failures

/// Why a command got no usable reply. A struct with a stable ``Kind``, so callers count and
/// report failures by kind without parsing messages.
///
/// Messages never contain the command's arguments (keys, passwords): of a server's error reply
/// only its first word (``reply``, Redis's error code such as `READONLY`) is kept, because Redis
/// may quote arguments in the rest.
package struct RESPError: Error, Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable, CaseIterable {
        /// The TCP (or TLS) connection could not be opened in time.
        case connect
        /// No reply within the command timeout; the connection is dropped (later replies
        /// could no longer be matched to their commands).
        case timeout
        /// The connection closed with the command unanswered.
        case closed
        /// The server answered with an error that says nothing about the connection (`-ERR`,
        /// `-WRONGPASS`, `-OOM`, `-NOPERM`, …); the connection is kept.
        case server
        /// The server answered with an error that says this connection cannot serve the
        /// command now: `-READONLY` (a replica — the old primary after a failover),
        /// `-LOADING` (a restarted Redis reading its data), `-MASTERDOWN` (a replica that lost
        /// its primary), `-NOAUTH` (restarted with a password). The connection is closed, so
        /// the next command connects afresh — resolving the host again, which is where a
        /// failover behind a DNS name or a Service leads to the new primary.
        case unavailable
        /// The server does not know the command or its syntax (`-ERR unknown command`,
        /// `-ERR syntax error`, `-ERR wrong number of arguments`): a server too old for the
        /// command, or something that is not Redis. Retrying cannot help.
        case unsupported
        /// A Redis Cluster refused the command for the cluster's state (`-CLUSTERDOWN`,
        /// `-TRYAGAIN` while a slot migrates, `-CROSSSLOT`), or redirected it (`-MOVED`, `-ASK`)
        /// more often than the client follows: the cluster answers for its slots, so this is no
        /// outage, and retrying the same node at once cannot help. The connection is kept.
        case cluster
        /// The bytes from the server are not RESP, or a reply the command cannot have; the
        /// connection is dropped (the stream can no longer be trusted to be in step).
        case `protocol`
        /// The write was made, but fewer replicas than asked confirmed it within the wait (`WAIT`
        /// after it): a failover now could lose it.
        case unreplicated
        /// A recent connection attempt failed and the retry back-off has not elapsed: failed at
        /// once instead of waiting for a server that is down.
        case backoff
        /// The client was shut down.
        case shutdown
    }

    package let kind: Kind
    package let message: String
    /// The name of the command the server refused (`SET`, `AUTH`, `SELECT`), for errors
    /// answered by the server; `nil` otherwise.
    package let command: String?
    /// The first word of the server's error reply (`ERR`, `READONLY`, `WRONGPASS`, …), for
    /// errors answered by the server; `nil` otherwise.
    package let reply: String?
    /// A cluster node's `-MOVED <slot> <host:port>` or `-ASK <slot> <host:port>` (no argument of
    /// the command is in these: they are kept whole).
    package var redirect: RESPRedirect?

    package init(_ kind: Kind, _ message: String, command: String? = nil, reply: String? = nil) {
        self.kind = kind
        self.message = message
        self.command = command
        self.reply = reply
    }

    /// The error for a server's error reply `text` to `command`, classified by its first words.
    package init(replying text: String, to command: String) {
        let word = text.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "ERR"
        let kind: Kind
        if Self.clusterErrors.contains(word.uppercased()) {
            kind = .cluster
        } else if Self.connectionErrors.contains(word.uppercased()) {
            kind = .unavailable
        } else if word.uppercased() == "ERR", Self.unsupportedPrefixes.contains(where: { text.lowercased().hasPrefix($0) }) {
            kind = .unsupported
        } else {
            kind = .server
        }
        // The rest of the text is dropped: Redis quotes arguments in it.
        self.init(kind, "\(command) answered \(word)", command: command, reply: word)
        redirect = RESPRedirect(text)
    }

    /// A slot moved for good, or for one command during a migration.
    package struct RESPRedirect: Sendable, Equatable {
        package var ask: Bool
        package var slot: Int
        package var address: RedisAddress

        init?(_ text: String) {
            let words = text.split(separator: " ")
            guard words.count == 3, words[0] == "MOVED" || words[0] == "ASK", let slot = Int(words[1]), (0..<16384).contains(slot),
                let colon = words[2].lastIndex(of: ":"), let port = Int(words[2][words[2].index(after: colon)...]), (1...65535).contains(port)
            else { return nil }
            var host = String(words[2][..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
            ask = words[0] == "ASK"
            self.slot = slot
            address = RedisAddress(host: host, port: port)
        }
    }

    /// Error replies after which this connection is not worth keeping (``Kind/unavailable``).
    static let connectionErrors: Set<String> = ["READONLY", "LOADING", "MASTERDOWN", "NOAUTH"]
    /// Error replies of a Redis Cluster node (``Kind/cluster``).
    static let clusterErrors: Set<String> = ["MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "CROSSSLOT"]
    /// How Redis (2.x to 7.x) begins its errors for a command or syntax it does not know.
    static let unsupportedPrefixes = ["err unknown command", "err syntax error", "err wrong number of arguments", "err unknown subcommand"]

    package var description: String { "\(kind.rawValue): \(message)" }
}
