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
    /// Multicast and reserved: `224/4`, `240/4` (with the broadcast address), `ff00::/8`.
    case reserved

    /// The class of an IPv4 address given in network order (`a.b.c.d` is `[a, b, c, d]`).
    package static func of(ipv4 a: [UInt8]) -> NetworkAddressClass {
        precondition(a.count == 4)
        switch (a[0], a[1]) {
        case (0, _): return .unspecified
        case (127, _): return .loopback
        case (169, 254): return .linkLocal
        case (10, _), (192, 168): return .private
        case (172, 16...31): return .private
        case (100, 64...127): return .private
        case (224...255, _): return .reserved
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
        if a[0] == 0x20 && a[1] == 0x02 { return of(ipv4: Array(a[2..<6])) }
        if a[0] == 0xFE && a[1] & 0xC0 == 0x80 { return .linkLocal }
        if a[0] == 0xFE && a[1] & 0xC0 == 0xC0 { return .private }
        if a[0] & 0xFE == 0xFC { return .private }
        if a[0] == 0xFF { return .reserved }
        return .public
    }

    /// The class of an address's bytes (4 or 16).
    package static func of(_ bytes: [UInt8]) -> NetworkAddressClass {
        bytes.count == 4 ? of(ipv4: bytes) : of(ipv6: bytes)
    }
}
