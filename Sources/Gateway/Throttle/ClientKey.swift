import NIOCore
import NIOHTTP1
import ServerSupport

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
            // address found stands. So does the address at ``maximumHops``: entries past it are
            // the client's to write (no real chain of proxies is that long), and are not read.
            var hops = 0
            var walking = true
            for value in headers["x-forwarded-for"].reversed() where walking {
                HTTPFieldValue.forEachElement(of: value, reversed: true) { entry in
                    hops += 1
                    guard hops <= Self.maximumHops, entry.utf8.count <= Self.maximumEntryLength, let address = Self.address(String(entry))
                    else {
                        walking = false
                        return false
                    }
                    client = address
                    walking = proxies.contains(high: address.high, low: address.low)
                    return walking
                }
            }
        }
        self.init(high: client.high, low: client.low)
    }

    /// The most `X-Forwarded-For` entries read, from the right.
    static let maximumHops = 32
    /// The longest entry read as an address: a bracketed IPv6 address with a port is 53 bytes.
    static let maximumEntryLength = 64

    /// An `X-Forwarded-For` entry's address, also written with a port as some proxies do
    /// (`203.0.113.7:51234`, `[2001:db8::7]:51234`): the port must not make it another client.
    static func address(_ text: String) -> (high: UInt64, low: UInt64)? {
        if let bits = AddressBlock.bits(text: text) { return bits }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return AddressBlock.bits(text: String(text[text.index(after: text.startIndex)..<close]))
        }
        guard let colon = text.firstIndex(of: ":"), colon == text.lastIndex(of: ":") else { return nil }
        return AddressBlock.bits(text: String(text[..<colon]))
    }

    package init(high: UInt64, low: UInt64) {
        self.high = high
        // IPv4 (mapped: ::ffff:0:0/96) by its address; IPv6 by its /64.
        let mapped = high == 0 && low >> 32 == 0x0000_FFFF
        self.low = mapped ? low : 0
    }
}
