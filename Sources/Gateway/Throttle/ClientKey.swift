import NIOCore
import NIOHTTP1

/// Whom a request is counted against by the throttle: the client's address as the backend would
/// key it (its throttle is per device address, from `X-Forwarded-For`), so the gateway's is
/// never keyed more finely than the backend's.
///
/// From a peer in `trusted-proxies`, the last `X-Forwarded-For` address not itself a trusted
/// proxy (the one the outermost trusted proxy saw); from any other peer, the peer. An IPv6
/// client is counted by its /64, the block one subscriber line is given: a client rotating
/// through its own /64 stays one client, and the table cannot be grown 2⁶⁴ ways by one host.
package struct ClientKey: Hashable, Sendable {
    package let high: UInt64
    package let low: UInt64

    /// `nil` for a peer without an IP address (a Unix socket): not throttled.
    init?(peer: SocketAddress?, headers: HTTPHeaders, trusting proxies: TrustedProxies) {
        guard let peer, let bits = AddressBlock.bits(of: peer) else { return nil }
        var client = bits
        if !proxies.isEmpty, proxies.contains(peer) {
            // Right to left: each hop appends the address it saw. The first that is not a
            // trusted proxy is the client; an entry that is no address ends the walk there (a
            // trusted proxy never writes one, so it came from the client), and the last
            // address found stands.
            walk: for value in headers["x-forwarded-for"].reversed() {
                for entry in value.split(separator: ",").reversed() {
                    let text = entry.trimmingCharacters(in: .whitespaces)
                    guard let address = AddressBlock.bits(text: text) else { break walk }
                    client = address
                    if !proxies.contains(high: address.high, low: address.low) { break walk }
                }
            }
        }
        self.init(high: client.high, low: client.low)
    }

    package init(high: UInt64, low: UInt64) {
        self.high = high
        // IPv4 (mapped: ::ffff:0:0/96) by its address; IPv6 by its /64.
        let mapped = high == 0 && low >> 32 == 0x0000_FFFF
        self.low = mapped ? low : 0
    }
}
