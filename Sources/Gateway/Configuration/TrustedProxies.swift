import Foundation
import NIOCore
import ServerSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

// MARK: - Address blocks

/// One CIDR block of `trusted-proxies`, parsed once at start-up into a 128-bit value and mask.
///
/// IPv4 blocks are held as IPv4-mapped IPv6 (`::ffff:a.b.c.d`, prefix + 96), so one compare
/// serves both families, and a peer seen as `::ffff:127.0.0.1` on a dual-stack listener matches
/// `127.0.0.0/8` exactly as `127.0.0.1` does. Matching a peer is two masked compares on its raw
/// socket address: no text is parsed per request.
struct AddressBlock: Sendable, Equatable {
    let high: UInt64
    let low: UInt64
    let maskHigh: UInt64
    let maskLow: UInt64

    /// Parses `a.b.c.d/n` (n in 0...32) or `x:…:y/n` (n in 0...128); a bare address is a
    /// single host. Throws a reason (without the value; the caller names it) when malformed or
    /// when bits beyond the prefix are set (`10.0.0.1/8` is a typo more often than a wish).
    init(cidr text: Substring) throws(AddressBlock.Malformed) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let address = String(parts[0])
        let isV6 = address.contains(":")
        guard let bits = isV6 ? Self.parseV6(address) : Self.parseV4(address) else {
            throw Malformed(reason: isV6 ? "not an IPv6 address" : "not an IPv4 address")
        }
        let width = isV6 ? 128 : 32
        var prefix = width
        if parts.count == 2 {
            let digits = parts[1].utf8
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(parts[1]), number <= width
            else {
                throw Malformed(reason: "the prefix length must be 0...\(width)")
            }
            prefix = number
        }
        let mapped = isV6 ? prefix : prefix + 96
        maskHigh = mapped >= 64 ? .max : (mapped == 0 ? 0 : .max << UInt64(64 - mapped))
        maskLow = mapped <= 64 ? 0 : (mapped == 128 ? .max : .max << UInt64(128 - mapped))
        guard bits.high & ~maskHigh == 0, bits.low & ~maskLow == 0 else {
            throw Malformed(reason: "bits are set after the prefix length")
        }
        high = bits.high
        low = bits.low
    }

    /// Why a block could not be read.
    struct Malformed: Error {
        var reason: String
    }

    func contains(high peerHigh: UInt64, low peerLow: UInt64) -> Bool {
        peerHigh & maskHigh == high && peerLow & maskLow == low
    }

    /// A socket address as 128 bits (IPv4 mapped); `nil` for a Unix domain socket.
    static func bits(of address: SocketAddress) -> (high: UInt64, low: UInt64)? {
        switch address {
        case .v4(let v4):
            return (0, 0x0000_FFFF_0000_0000 | UInt64(UInt32(bigEndian: v4.address.sin_addr.s_addr)))
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            return withUnsafeBytes(of: &raw) { bytes in
                (
                    UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                    UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                )
            }
        case .unixDomainSocket:
            return nil
        }
    }

    /// A textual address (an `X-Forwarded-For` entry) as 128 bits (IPv4 mapped); `nil` when it
    /// is neither a dotted quad nor an IPv6 address.
    static func bits(text: String) -> (high: UInt64, low: UInt64)? {
        text.contains(":") ? parseV6(text) : parseV4(text)
    }

    /// `inet_pton` accepts only the dotted quad (no octal, hex or short forms).
    private static func parseV4(_ text: String) -> (high: UInt64, low: UInt64)? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return (0, 0x0000_FFFF_0000_0000 | UInt64(UInt32(bigEndian: address.s_addr)))
    }

    /// `inet_pton` refuses zone ids (`fe80::1%eth0`), which a peer address never carries.
    private static func parseV6(_ text: String) -> (high: UInt64, low: UInt64)? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }
}
