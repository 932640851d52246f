import Foundation
import NIOCore
import ServerSupport

/// The `trusted-proxies` setting: the peers whose `X-Forwarded-Host`, `X-Forwarded-Proto` and
/// `X-Forwarded-For` the gateway passes on (see ``ProxyHeaders``).
///
/// Empty by default: any client can write those headers, and a backend that builds redirect URLs
/// or rate-limits from them would otherwise believe whatever the client claimed. Only a proxy
/// the operator runs in front of the gateway should be listed.
@_spi(Benchmarks) public struct TrustedProxies: Sendable, Equatable {
    private var blocks: [AddressBlock] = []

    public init() {}

    /// Parses a comma-separated list of CIDR blocks (`10.0.0.0/8, ::1/128`; a bare address is
    /// one host). Throws a message naming the first malformed block (the caller adds where the
    /// setting came from).
    package init(parsing list: String) throws(ConfigurationError) {
        for item in list.split(separator: ",") {
            let block = item.trimmingCharacters(in: .whitespaces)
            guard !block.isEmpty else { continue }
            do {
                blocks.append(try AddressBlock(cidr: Substring(block)))
            } catch {
                throw ConfigurationError("\"\(block)\" is not a CIDR block (\(error.reason))")
            }
        }
    }

    public var isEmpty: Bool { blocks.isEmpty }

    /// The number of blocks.
    public var count: Int { blocks.count }

    /// Whether the TCP peer `address` is inside one of the blocks.
    public func contains(_ address: SocketAddress) -> Bool {
        guard !blocks.isEmpty, let bits = AddressBlock.bits(of: address) else { return false }
        return contains(high: bits.high, low: bits.low)
    }

    /// Whether the address of 128 bits (IPv4 mapped) is inside one of the blocks.
    func contains(high: UInt64, low: UInt64) -> Bool {
        for block in blocks where block.contains(high: high, low: low) { return true }
        return false
    }
}
