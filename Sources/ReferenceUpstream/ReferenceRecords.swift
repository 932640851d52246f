import Foundation
import Synchronization

/// What the reference upstream remembers, in memory: authentication tokens per
/// requestor + device, and the last exchanges exactly as they arrived (for tests and demos that
/// check what reached the backend).
public final class ReferenceRecords: Sendable {
    public struct Token: Sendable {
        public var requestor: String
        public var mvpd: String
        public var expires: Date
        /// `Apple` for a token from a partner SSO exchange.
        public var tokenSource: String
    }

    public struct Exchange: Sendable {
        /// `v1` or `v2`.
        public var route: String
        public var requestor: String
        /// The `SAMLResponse` field exactly as it was in the body (before any decoding).
        public var samlResponse: String
        public var requestID: String?
    }

    private struct State {
        var tokens: [String: Token] = [:]
        var exchanges: [Exchange] = []
    }

    private let state = Mutex(State())
    /// Exchanges kept (oldest dropped first).
    public let exchangeLimit: Int

    public init(exchangeLimit: Int = 10_000) {
        self.exchangeLimit = exchangeLimit
    }

    static func key(_ requestor: String, _ deviceID: String) -> String { requestor + "\u{0}" + deviceID }

    func record(token: Token, deviceID: String, exchange: Exchange) {
        state.withLock { state in
            state.tokens[Self.key(token.requestor, deviceID)] = token
            state.exchanges.append(exchange)
            if state.exchanges.count > exchangeLimit { state.exchanges.removeFirst(state.exchanges.count - exchangeLimit) }
        }
    }

    public func token(requestor: String, deviceID: String, now: Date = Date()) -> Token? {
        state.withLock { state in
            guard let token = state.tokens[Self.key(requestor, deviceID)], token.expires > now else { return nil }
            return token
        }
    }

    public var exchanges: [Exchange] {
        state.withLock { $0.exchanges }
    }
}
