import Foundation
import NIOCore
import Synchronization

/// Everything the reference upstream remembers, in memory: authentications (v1 tokens and v2
/// profiles), second-screen logins, v2 clients and access tokens, v1 authorizations, and the
/// last token exchanges as they arrived.
///
/// Ids and codes come from one counter, so a run is deterministic: the n-th registration code
/// of a fresh process is always the same.
package final class ReferenceStore: Sendable {
    private struct State {
        var counter = 0
        /// Per requestor and device (``ReferenceStore/deviceKey(_:_:)``), oldest first: an exchange
        /// looks at one device's few entries, not at every device's.
        var authentications: [String: [ReferenceAuthentication]] = [:]
        var pending: [String: PendingLogin] = [:]
        var clients: [String: String] = [:]
        var accessTokens: [String: (client: String, expires: Date)] = [:]
        var authorizations: [String: Date] = [:]
        /// A ring: dropping the oldest must not move the others (an array of 10,000 did, ~0.7 MB
        /// of memmove on every exchange once `make load` passed 10,000 requests).
        var exchanges = CircularBuffer<RecordedExchange>()
    }

    private let state = Mutex(State())
    /// Exchanges kept (oldest dropped first).
    package let exchangeLimit: Int
    /// Tests and demos look at the last few exchanges. Each one holds an ~11 KB response, so a
    /// longer log is memory the process keeps faulting in while it fills: at 10,000, zeroing
    /// fresh pages was 12 % of the upstream's CPU under `make load`.
    package static let defaultExchangeLimit = 1_000

    package init(exchangeLimit: Int = ReferenceStore.defaultExchangeLimit) {
        precondition(exchangeLimit >= 0, "the exchange log cannot have a negative size")
        self.exchangeLimit = exchangeLimit
    }

    /// `PREFIX` followed by the next counter value, zero-padded.
    func nextID(_ prefix: String) -> String {
        let digits = String(nextNumber())
        return prefix + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    func nextNumber() -> Int {
        state.withLock { state in
            state.counter += 1
            return state.counter
        }
    }

    // MARK: authentications

    /// Records an authentication, replacing the device's previous one for the same MVPD.
    func authenticate(_ authentication: ReferenceAuthentication) {
        let key = Self.deviceKey(authentication.requestor, authentication.deviceID)
        state.withLock { state in
            state.authentications[key, default: []].removeAll { $0.mvpd == authentication.mvpd }
            state.authentications[key, default: []].append(authentication)
        }
    }

    /// The device's valid authentications for the requestor, newest first.
    package func authentications(requestor: String, deviceID: String, now: Date = Date()) -> [ReferenceAuthentication] {
        state.withLock { state in
            (state.authentications[Self.deviceKey(requestor, deviceID)] ?? []).filter { $0.notAfter > now }.reversed()
        }
    }

    /// Removes the device's authentications (all MVPDs, or one) and returns what was removed.
    func logout(requestor: String, deviceID: String, mvpd: String? = nil) -> [ReferenceAuthentication] {
        state.withLock { state in
            let key = Self.deviceKey(requestor, deviceID)
            let matches: (ReferenceAuthentication) -> Bool = { mvpd == nil || $0.mvpd == mvpd }
            let removed = (state.authentications[key] ?? []).filter(matches)
            state.authentications[key]?.removeAll(where: matches)
            if state.authentications[key]?.isEmpty == true { state.authentications[key] = nil }
            state.authorizations = state.authorizations.filter { !$0.key.hasPrefix(Self.key(requestor, deviceID, "")) }
            return removed
        }
    }

    // MARK: second screen

    func addPending(_ login: PendingLogin) {
        state.withLock { $0.pending[login.code] = login }
    }

    func pending(_ code: String, now: Date = Date()) -> PendingLogin? {
        state.withLock { state in state.pending[code].flatMap { $0.expires > now ? $0 : nil } }
    }

    func removePending(_ code: String) {
        state.withLock { _ = $0.pending.removeValue(forKey: code) }
    }

    // MARK: v2 clients

    func registerClient(id: String, secret: String) {
        state.withLock { $0.clients[id] = secret }
    }

    func clientSecret(_ id: String) -> String? {
        state.withLock { $0.clients[id] }
    }

    func grant(token: String, client: String, expires: Date) {
        state.withLock { $0.accessTokens[token] = (client, expires) }
    }

    func accessTokenValid(_ token: String, now: Date = Date()) -> Bool {
        state.withLock { state in (state.accessTokens[token]?.expires).map { $0 > now } ?? false }
    }

    // MARK: v1 authorizations

    /// The authentications' key: one requestor's device.
    static func deviceKey(_ requestor: String, _ deviceID: String) -> String {
        requestor + "\u{0}" + deviceID
    }

    static func key(_ requestor: String, _ deviceID: String, _ resource: String) -> String {
        requestor + "\u{0}" + deviceID + "\u{0}" + resource
    }

    func authorize(requestor: String, deviceID: String, resource: String, until expires: Date) {
        state.withLock { $0.authorizations[Self.key(requestor, deviceID, resource)] = expires }
    }

    func authorized(requestor: String, deviceID: String, resource: String, now: Date = Date()) -> Bool {
        state.withLock { state in (state.authorizations[Self.key(requestor, deviceID, resource)]).map { $0 > now } ?? false }
    }

    // MARK: exchanges

    func record(_ exchange: RecordedExchange) {
        state.withLock { state in
            guard exchangeLimit > 0 else { return }
            if state.exchanges.count == exchangeLimit { state.exchanges.removeFirst() }
            state.exchanges.append(exchange)
        }
    }

    package var exchanges: [RecordedExchange] {
        state.withLock { Array($0.exchanges) }
    }
}

// MARK: - What the store holds

/// One authentication the backend holds for a requestor + device + MVPD: a v1 authentication
/// token and a v2 profile are two views of it (the same backend answers both APIs).
package struct ReferenceAuthentication: Sendable {
    package enum Source: String, Sendable {
        /// A partner (Apple) SSO token exchange: v1 `tokenSource` `Apple`, v2 profile `appleSSO`.
        case partner
        /// A second-screen / basic authentication at the MVPD's login page.
        case basic
    }

    package var requestor: String
    package var deviceID: String
    package var mvpd: String
    package var source: Source
    /// An opaque, hashed user id (never the NameID itself).
    package var userID: String
    package var notBefore: Date
    package var notAfter: Date

    /// v1 user metadata `tokenSource`.
    package var tokenSource: String { source == .partner ? "Apple" : mvpd }
    /// v2 profile `type`.
    package var profileType: String { source == .partner ? "appleSSO" : "regular" }
}

/// A second-screen login waiting for the user: a v1 registration code or a v2 basic
/// authentication session code. The reference MVPD login form completes it.
struct PendingLogin: Sendable {
    var code: String
    var requestor: String
    var deviceID: String
    /// Chosen up front, or at the login form.
    var mvpd: String?
    var generated: Date
    var expires: Date
    /// v2 basic sessions: parameters still to be supplied by a resume (`PUT`).
    var missingParameters: [String] = []
}

/// A token exchange exactly as it reached the backend (tests and demos check what the gateway
/// forwarded).
package struct RecordedExchange: Sendable {
    /// `v1` or `v2`.
    package var route: String
    package var requestor: String
    /// The `SAMLResponse` field exactly as it was in the body (before any decoding).
    package var samlResponse: String
    package var requestID: String?
}
