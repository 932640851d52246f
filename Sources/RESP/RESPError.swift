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
        /// The server is a Redis Cluster node and redirected the command or refused it for the
        /// cluster's state (`-MOVED`, `-ASK`, `-CLUSTERDOWN`, `-TRYAGAIN`, `-CROSSSLOT`): this
        /// client sends every command to the one address it was given and does not follow hash
        /// slots, so this is a deployment it does not support, not an outage — retrying the same
        /// node cannot help. The connection is kept.
        case cluster
        /// The bytes from the server are not RESP, or a reply the command cannot have; the
        /// connection is dropped (the stream can no longer be trusted to be in step).
        case `protocol`
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
    }

    /// Error replies after which this connection is not worth keeping (``Kind/unavailable``).
    static let connectionErrors: Set<String> = ["READONLY", "LOADING", "MASTERDOWN", "NOAUTH"]
    /// Error replies of a Redis Cluster node (``Kind/cluster``).
    static let clusterErrors: Set<String> = ["MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "CROSSSLOT"]
    /// How Redis (2.x to 7.x) begins its errors for a command or syntax it does not know.
    static let unsupportedPrefixes = ["err unknown command", "err syntax error", "err wrong number of arguments", "err unknown subcommand"]

    package var description: String { "\(kind.rawValue): \(message)" }
}
