@_spi(Benchmarks) import Gateway
import NIOCore
import Testing

/// `trusted-proxies` parsing and matching, on socket addresses as the gateway sees its peers.
@Suite("Trusted proxies")
struct TrustedProxiesTests {
    static func peer(_ address: String) -> SocketAddress {
        try! SocketAddress(ipAddress: address, port: 40_000)
    }

    @Test("IPv4 blocks: inside, outside, /32, /0; an IPv4-mapped IPv6 peer matches the IPv4 block")
    func ipv4() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.7/32")
        #expect(proxies.count == 2)
        #expect(proxies.contains(Self.peer("10.1.2.3")))
        #expect(proxies.contains(Self.peer("10.255.255.255")))
        #expect(!proxies.contains(Self.peer("11.0.0.0")))
        #expect(!proxies.contains(Self.peer("9.255.255.255")))
        #expect(proxies.contains(Self.peer("192.168.1.7")))
        #expect(!proxies.contains(Self.peer("192.168.1.6")) && !proxies.contains(Self.peer("192.168.1.8")))
        #expect(proxies.contains(Self.peer("::ffff:10.9.8.7")))
        #expect(!proxies.contains(Self.peer("::10.9.8.7")) && !proxies.contains(Self.peer("2001:db8::1")))
        let everyV4 = try TrustedProxies(parsing: "0.0.0.0/0")
        #expect(everyV4.contains(Self.peer("1.2.3.4")) && everyV4.contains(Self.peer("255.255.255.255")))
        #expect(!everyV4.contains(Self.peer("2001:db8::1")))
        // A bare address is one host.
        let host = try TrustedProxies(parsing: "127.0.0.1")
        #expect(host.contains(Self.peer("127.0.0.1")) && !host.contains(Self.peer("127.0.0.2")))
    }

    @Test("IPv6 blocks: inside, outside, /128, /0, a prefix that is not a multiple of 8")
    func ipv6() throws {
        let proxies = try TrustedProxies(parsing: "2001:db8::/32,::1/128, fd00:ab80::/25")
        #expect(proxies.contains(Self.peer("2001:db8:ffff::1")))
        #expect(!proxies.contains(Self.peer("2001:db9::1")))
        #expect(proxies.contains(Self.peer("::1")) && !proxies.contains(Self.peer("::2")))
        #expect(proxies.contains(Self.peer("fd00:abff::1")) && !proxies.contains(Self.peer("fd00:ab7f::1")))
        #expect(!proxies.contains(Self.peer("127.0.0.1")))
        let every = try TrustedProxies(parsing: "::/0")
        #expect(every.contains(Self.peer("2001:db8::1")) && every.contains(Self.peer("127.0.0.1")))
        let low = try TrustedProxies(parsing: "::ffff:0:0/96")
        #expect(low.contains(Self.peer("8.8.8.8")) && !low.contains(Self.peer("::1")))
    }

    @Test("empty trusts nobody; a Unix socket peer is never trusted")
    func empty() throws {
        #expect(try TrustedProxies(parsing: "").isEmpty)
        #expect(try TrustedProxies(parsing: " , ").isEmpty)
        #expect(!TrustedProxies().contains(Self.peer("127.0.0.1")))
        let unix = try SocketAddress(unixDomainSocketPath: "/tmp/samlgate-test.sock")
        #expect(!(try TrustedProxies(parsing: "::/0, 0.0.0.0/0")).contains(unix))
    }

    @Test(
        "malformed blocks are refused, naming the value",
        arguments: [
            "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/9", "010.0.0.0/8", "1.2.3.4.5",
            "::1/129", "fe80::1%eth0/64", "2001:db8::/ 32", "gggg::/16", "abc", "/8", "10.0.0.1/8", "2001:db8::1/32", "0.0.0.0/0000",
        ])
    func malformed(_ value: String) {
        do {
            _ = try TrustedProxies(parsing: "127.0.0.0/8, " + value)
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.message.contains("\"\(value.trimmingCharacters(in: .whitespaces))\""), "\(error.message)")
        }
    }
}
