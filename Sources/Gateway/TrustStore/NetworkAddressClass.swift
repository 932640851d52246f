// Where a metadata redirect may lead: the class of network an address belongs to, and the
// addresses (so the classes) a host name resolves to.

import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The kind of network an IP address belongs to, for the redirects of a metadata fetch: a
/// source may send the gateway elsewhere on the internet, but not into the gateway's own
/// network position — its loopback, the link-local cloud metadata service (`169.254.169.254`,
/// `fd00:ec2::254`), a private network — unless its configured URL is in that class itself.
///
/// The class is that of the address a name resolves to, so every spelling of an address
/// (`127.1`, `0x7f000001`, `2130706433`, `localhost`, `[::ffff:127.0.0.1]`) lands in the same
/// class; an IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4) is classed
/// by the IPv4 address it carries.
package enum NetworkAddressClass: String, Sendable, Hashable {
    case `public`
    /// `127/8`, `::1`.
    case loopback
    /// `169.254/16`, `fe80::/10`.
    case linkLocal = "link-local"
    /// `10/8`, `172.16/12`, `192.168/16`, the shared address space `100.64/10`, `fc00::/7`
    /// (unique local) and the deprecated site-local `fec0::/10`.
    case `private`
    /// `0/8`, `::` (connecting to `0.0.0.0` reaches the host itself on Linux).
    case unspecified
    /// Multicast, and every other special-purpose block the IANA registries mark as not globally
    /// reachable: `224/4`, `240/4` (with the broadcast address), the IETF protocol assignments
    /// `192.0.0/24` (whole: its two anycast exceptions serve no metadata), the documentation blocks
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32` and `3fff::/20`,
    /// benchmarking `198.18/15` and `2001:2::/48`, the deprecated 6to4 relay anycast
    /// `192.88.99/24`, Teredo `2001::/32` (its client address is the relay's to reach, whatever
    /// it is), ORCHID `2001:10::/28`, the rest of `2001::/23` but its globally reachable
    /// assignments, discard-only `100::/64`, `ff00::/8`, and all IPv6 outside `2000::/3` not
    /// named above (unassigned, or SRv6 SIDs `5f00::/16`).
    case reserved

    /// The class of an IPv4 address given in network order (`a.b.c.d` is `[a, b, c, d]`).
    package static func of(ipv4 a: [UInt8]) -> NetworkAddressClass {
        precondition(a.count == 4)
        switch (a[0], a[1], a[2]) {
        case (0, _, _): return .unspecified
        case (127, _, _): return .loopback
        case (169, 254, _): return .linkLocal
        case (10, _, _), (192, 168, _): return .private
        case (172, 16...31, _): return .private
        case (100, 64...127, _): return .private
        case (192, 0, 0), (192, 0, 2), (192, 88, 99), (198, 18...19, _), (198, 51, 100), (203, 0, 113): return .reserved
        case (224...255, _, _): return .reserved
        default: return .public
        }
    }

    /// The class of an IPv6 address given in network order (16 bytes).
    package static func of(ipv6 a: [UInt8]) -> NetworkAddressClass {
        precondition(a.count == 16)
        let zeros = a[0..<10].allSatisfy { $0 == 0 }
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; :: and ::1 excluded).
        if zeros && a[10] == 0xFF && a[11] == 0xFF { return of(ipv4: Array(a[12..<16])) }
        if zeros && a[10] == 0 && a[11] == 0 {
            if a[12..<15].allSatisfy({ $0 == 0 }) && a[15] <= 1 { return a[15] == 0 ? .unspecified : .loopback }
            return of(ipv4: Array(a[12..<16]))
        }
        // 64:ff9b::a.b.c.d (NAT64 well-known prefix) and 2002:aabb:ccdd::/48 (6to4).
        if a[0..<12] == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return of(ipv4: Array(a[12..<16])) }
        // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): the operator picks where the IPv4 address
        // sits; classed by the /96 spelling when that is not public, and private otherwise.
        if a[0..<6] == [0, 0x64, 0xFF, 0x9B, 0, 0x01] {
            let embedded = of(ipv4: Array(a[12..<16]))
            return embedded == .public ? .private : embedded
        }
        if a[0] == 0x20 && a[1] == 0x02 { return of(ipv4: Array(a[2..<6])) }
        if a[0] == 0xFE && a[1] & 0xC0 == 0x80 { return .linkLocal }
        if a[0] == 0xFE && a[1] & 0xC0 == 0xC0 { return .private }
        if a[0] & 0xFE == 0xFC { return .private }
        if a[0] == 0xFF { return .reserved }
        // Outside 2000::/3 nothing is global unicast (::/8 rests, 100::/64, 5f00::/16, ...).
        if a[0] & 0xE0 != 0x20 { return .reserved }
        if a[0] == 0x20 && a[1] == 0x01 && a[2] & 0xFE == 0 { return ietfProtocolAssignment(a) }
        if a[0..<4] == [0x20, 0x01, 0x0D, 0xB8] { return .reserved }
        if a[0] == 0x3F && a[1] == 0xFF && a[2] & 0xF0 == 0 { return .reserved }
        return .public
    }

    /// `2001::/23` (IETF protocol assignments): reserved but the blocks the registry marks as
    /// globally reachable: `2001:1::1`–`2001:1::3` (anycast), `2001:3::/32` (AMT),
    /// `2001:4:112::/48` (AS112), `2001:20::/28` (ORCHIDv2), `2001:30::/28` (drone remote ID).
    private static func ietfProtocolAssignment(_ a: [UInt8]) -> NetworkAddressClass {
        let block = UInt16(a[2]) << 8 | UInt16(a[3])
        switch block {
        case 0x0001 where a[4..<15].allSatisfy({ $0 == 0 }) && (1...3).contains(a[15]): return .public
        case 0x0003: return .public
        case 0x0004 where a[4..<6] == [0x01, 0x12]: return .public
        case 0x0020...0x003F: return .public
        default: return .reserved
        }
    }

    /// The class of an address's bytes (4 or 16).
    package static func of(_ bytes: [UInt8]) -> NetworkAddressClass {
        bytes.count == 4 ? of(ipv4: bytes) : of(ipv6: bytes)
    }
}

// MARK: - Resolving a host to classed addresses

/// Resolves a host name to its addresses with `getaddrinfo`, as the HTTP client does, so that a
/// redirect's host is classed (``NetworkAddressClass``) by what a connection would reach: a
/// name, and every numeric spelling glibc accepts (`127.1`, `0x7f000001`, `2130706433`).
///
/// `getaddrinfo` blocks, so it runs on a Dispatch thread, never on the cooperative pool; the
/// caller stops waiting when its task is cancelled (the fetch's deadline), and the lookup then
/// ends on its own in the background.
package enum HostResolver {
    package struct Address: Sendable, Hashable {
        /// 4 or 16 bytes, network order.
        package let bytes: [UInt8]
        /// The numeric form (`127.0.0.1`, `::1`), what the HTTP client is told to connect to.
        package let text: String

        package var addressClass: NetworkAddressClass { NetworkAddressClass.of(bytes) }
    }

    /// The addresses of `host` (brackets around an IPv6 literal allowed); empty when it does
    /// not resolve or the task was cancelled first.
    package static func resolve(_ host: String) async -> [Address] {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let wait = Wait()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Address], Never>) in
                guard wait.park(continuation) else {
                    continuation.resume(returning: [])
                    return
                }
                DispatchQueue.global().async {
                    let addresses = lookup(host)
                    wait.finish(addresses)
                }
            }
        } onCancel: {
            wait.finish([])
        }
    }

    /// The continuation, resumed exactly once: by the lookup or by cancellation.
    private final class Wait: Sendable {
        private enum State {
            case idle
            case parked(CheckedContinuation<[Address], Never>)
            case finished
        }
        private let state = Mutex(State.idle)

        /// Parks the continuation; `false` when the wait already ended (cancelled first).
        func park(_ continuation: CheckedContinuation<[Address], Never>) -> Bool {
            state.withLock { state in
                guard case .idle = state else { return false }
                state = .parked(continuation)
                return true
            }
        }

        func finish(_ addresses: [Address]) {
            let parked = state.withLock { state -> CheckedContinuation<[Address], Never>? in
                defer { state = .finished }
                if case .parked(let continuation) = state { return continuation }
                return nil
            }
            parked?.resume(returning: addresses)
        }
    }

    private static func lookup(_ host: String) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            guard let address = entry.pointee.ai_addr else { continue }
            var bytes: [UInt8]
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                bytes = withUnsafeBytes(of: &v4) { Array($0) }
            case AF_INET6:
                var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                bytes = withUnsafeBytes(of: &v6) { Array($0) }
            default:
                continue
            }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            guard inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, bytes, &text, socklen_t(text.count)) != nil else { continue }
            let found = Address(bytes: bytes, text: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            if !addresses.contains(found) { addresses.append(found) }
        }
        return addresses
    }
}
