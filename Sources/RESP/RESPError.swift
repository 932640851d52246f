/// Why a command got no usable reply. A struct with a stable ``Kind``, so callers count and
/// report failures by kind without parsing messages.
///
/// Messages never contain the command's arguments (keys, passwords).
public struct RESPError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// The TCP (or TLS) connection could not be opened in time.
        case connect
        /// No reply within the command timeout; the connection is dropped (later replies
        /// could no longer be matched to their commands).
        case timeout
        /// The connection closed with the command unanswered.
        case closed
        /// The server answered with an error (`-ERR`, `-WRONGPASS`, …).
        case server
        /// The bytes from the server are not RESP.
        case `protocol`
        /// A recent connection attempt failed and the retry back-off has not elapsed: failed at
        /// once instead of waiting for a server that is down.
        case backoff
        /// The client was shut down.
        case shutdown
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
