import NIOCore
import Synchronization

/// `max-connections` and `max-connections-per-client`: the open client connections, counted at
/// accept and released at close. A connection beyond a cap is closed before it is read from, so
/// one address (or a flood of them) cannot hold every file descriptor and event-loop slot.
///
/// Per client is per peer address (an IPv6 peer by its /64, as in ``ClientKey``): at accept
/// nothing else is known.
package final class ConnectionCaps: Sendable {
    private let total: Int
    private let perClient: Int
    private let state = Mutex(State())

    struct State {
        var open = 0
        var byClient: [ClientKey: Int] = [:]
    }

    /// Why a connection was closed at accept: the `reason` of `samlgate_connections_refused_total`.
    package enum Refusal: String, Sendable, CaseIterable {
        case total
        case perClient = "per_client"
    }

    /// - Parameters: `0` for no limit.
    package init(total: Int, perClient: Int) {
        self.total = total
        self.perClient = perClient
    }

    /// Counts a new connection from `peer`, or refuses it (nothing counted).
    func admit(_ peer: SocketAddress?) -> (key: ClientKey?, refusal: Refusal?) {
        let key = peer.flatMap(AddressBlock.bits(of:)).map { ClientKey(high: $0.high, low: $0.low) }
        let refusal = state.withLock { state -> Refusal? in
            if total > 0 && state.open >= total { return .total }
            if let key, perClient > 0 {
                let count = state.byClient[key, default: 0]
                if count >= perClient { return .perClient }
                state.byClient[key] = count + 1
            }
            state.open += 1
            return nil
        }
        return (key, refusal)
    }

    /// A connection ``admit(_:)`` counted has closed.
    func release(_ key: ClientKey?) {
        state.withLock { state in
            state.open -= 1
            if let key, perClient > 0 {
                let count = (state.byClient[key] ?? 1) - 1
                state.byClient[key] = count > 0 ? count : nil
            }
        }
    }

    /// Open connections now.
    var open: Int { state.withLock { $0.open } }
}
