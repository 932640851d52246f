import Foundation
import Gateway
import GatewayTestSupport
import TestIdP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A metadata source may redirect the gateway elsewhere on the internet, but not into its own
/// network position (loopback, link-local — the cloud metadata service —, private, unspecified,
/// reserved) unless its configured URL is in that class itself; every spelling of an address,
/// and a name, is classed by what it resolves to.
@Suite("Metadata redirects", .serialized)
struct MetadataRedirectTests {
    typealias Remote = RemoteMetadataTests

    @Test("addresses are classed by what they resolve to, whatever the spelling")
    func classes() async throws {
        let cases: [(String, NetworkAddressClass)] = [
            ("127.0.0.1", .loopback), ("127.1", .loopback), ("0x7f000001", .loopback), ("2130706433", .loopback),
            ("017700000001", .loopback), ("127.255.255.254", .loopback), ("localhost", .loopback), ("::1", .loopback),
            ("[::1]", .loopback), ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::127.0.0.1", .loopback),
            ("64:ff9b::127.0.0.1", .loopback), ("2002:7f00:1::1", .loopback),
            ("169.254.169.254", .linkLocal), ("0xa9fea9fe", .linkLocal), ("::ffff:169.254.169.254", .linkLocal), ("fe80::1", .linkLocal),
            ("febf::1", .linkLocal),
            ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
            ("100.100.100.200", .private), ("fc00::1", .private), ("fd00:ec2::254", .private), ("::ffff:10.0.0.1", .private),
            ("0.0.0.0", .unspecified), ("0", .unspecified), ("::", .unspecified), ("::ffff:0.0.0.0", .unspecified),
            ("224.0.0.1", .reserved), ("255.255.255.255", .reserved), ("ff02::1", .reserved),
            ("8.8.8.8", .public), ("172.32.0.1", .public), ("172.15.0.1", .public), ("::ffff:8.8.8.8", .public), ("169.253.0.1", .public),
            // Special-purpose blocks that are not globally reachable.
            ("0.1.2.3", .unspecified), ("192.0.0.1", .reserved), ("192.0.0.9", .reserved), ("192.0.0.255", .reserved),
            ("192.0.2.2", .reserved), ("198.51.100.7", .reserved), ("203.0.113.9", .reserved), ("198.18.0.1", .reserved),
            ("198.19.255.255", .reserved), ("192.88.99.1", .reserved), ("240.0.0.1", .reserved), ("::ffff:192.0.2.2", .reserved),
            ("2001:db8::1", .reserved), ("2001:db8:ffff::1", .reserved), ("3fff::1", .reserved), ("3fff:fff::1", .reserved),
            ("2001:2::1", .reserved), ("2001:10::1", .reserved), ("2001:1::4", .reserved), ("2001:5::1", .reserved),
            ("100::1", .reserved), ("5f00::1", .reserved), ("::ffff:0:a00:1", .reserved), ("1::1", .reserved), ("4000::1", .reserved),
            ("e000::1", .reserved), ("fbff::1", .reserved),
            // Teredo: refused whatever client address it hides (here 127.0.0.1 and 8.8.8.8, obfuscated).
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", .reserved), ("2001::f7f7:f7f7", .reserved),
            // Local-use NAT64: classed by the /96 embedding, private otherwise.
            ("64:ff9b:1::127.0.0.1", .loopback), ("64:ff9b:1::10.0.0.1", .private), ("64:ff9b:1::8.8.8.8", .private),
            ("64:ff9b:1:ffff::808:808", .private), ("64:ff9b::192.0.2.1", .reserved), ("2002:c000:0201::1", .reserved),
            // Globally reachable assignments stay public.
            ("192.0.1.1", .public), ("192.0.3.1", .public), ("192.31.196.1", .public), ("198.17.255.255", .public),
            ("198.20.0.1", .public), ("198.51.101.1", .public), ("203.0.112.1", .public), ("2001:4860:4860::8888", .public),
            ("2606:4700::1111", .public), ("2001:3::1", .public), ("2001:4:112::1", .public), ("2001:20::1", .public),
            ("2001:1::1", .public), ("2001:200::1", .public), ("2001:db9::1", .public), ("3ffe::1", .public), ("3fff:1000::1", .public),
        ]
        for (host, expected) in cases {
            let addresses = await HostResolver.resolve(host)
            #expect(!addresses.isEmpty, "\(host)")
            #expect(addresses.allSatisfy { $0.addressClass == expected }, "\(host): \(addresses.map { "\($0.text) \($0.addressClass)" })")
        }
    }

    /// A local IPv4 address other than loopback (an interface of this machine), or `nil`.
    static func nonLoopbackAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(first) }
        var next: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = next {
            next = entry.pointee.ifa_next
            guard let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET else { continue }
            var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            let bytes = withUnsafeBytes(of: &v4) { Array($0) }
            guard NetworkAddressClass.of(ipv4: bytes) != .loopback else { continue }
            return bytes.map(String.init).joined(separator: ".")
        }
        return nil
    }

    static func port(_ server: MetadataServer) -> Int { URL(string: server.url)!.port! }

    /// Points `server` at each location in turn and expects each redirect refused (counted as
    /// `redirect_refused`), the target never asked, and the last good copy kept.
    static func expectRefused(
        _ locations: [String], _ server: MetadataServer, trap: MetadataServer, _ harness: GatewayHarness
    ) async throws {
        for location in locations {
            let before = try await Remote.failures(harness, "redirect_refused")
            server.set(mode: .redirect(location))
            #expect(try await Remote.eventually { try await Remote.failures(harness, "redirect_refused") > before }, "\(location)")
            #expect(trap.requests == 0, "\(location) was followed")
            #expect(try await harness.exchangeV1(Remote.signed(GatewayHarness.idp)).status == 204, "\(location)")
            #expect(try await harness.exchangeV1(Remote.signed(MetadataTrustTests.nextIdP)).reason == "key_not_trusted", "\(location)")
        }
    }

    @Test(
        "a source on a non-loopback address may not redirect to loopback in any spelling (the target is never asked); a redirect to its own class is followed",
        .enabled(if: nonLoopbackAddress() != nil, "no non-loopback IPv4 address on this machine")
    )
    func nonLoopbackSourceToLoopback() async throws {
        let address = try #require(Self.nonLoopbackAddress())
        let good = Remote.document([GatewayHarness.idpPair])
        let server = try await MetadataServer.start(document: good, host: address)
        defer { Task { await server.stop() } }
        // What a followed redirect would fetch: the rotated key.
        let rotated = Remote.document([MetadataTrustTests.nextPair], validUntil: Date().addingTimeInterval(8 * 86_400))
        let trap = try await MetadataServer.start(document: rotated)
        defer { Task { await trap.stop() } }
        let elsewhere = try await MetadataServer.start(document: rotated, host: address)
        defer { Task { await elsewhere.stop() } }
        try await Remote.withSource(server.url) { harness, cache async throws in
            let port = Self.port(trap)
            try await Self.expectRefused(
                [
                    "http://127.0.0.1:\(port)/metadata", "http://localhost:\(port)/metadata",
                    "http://127.1:\(port)/metadata", "http://0x7f000001:\(port)/metadata", "http://2130706433:\(port)/metadata",
                    "http://017700000001:\(port)/metadata", "http://[::ffff:127.0.0.1]:\(port)/metadata", "http://[::1]:\(port)/metadata",
                    "http://0.0.0.0:\(port)/metadata", "http://[::]:\(port)/metadata", "http://169.254.169.254/latest/meta-data/",
                    "//127.0.0.1:\(port)/metadata",
                ], server, trap: trap, harness)
            // The same class as the configured host: followed.
            server.set(mode: .redirect(elsewhere.url))
            #expect(try await Remote.eventually { try await harness.exchangeV1(Remote.signed(MetadataTrustTests.nextIdP)).status == 204 })
            #expect(trap.requests == 0)
        }
    }

    @Test(
        "a loopback source may redirect to loopback (a name is resolved and connected to as checked), not to link-local, private, unspecified or reserved addresses"
    )
    func loopbackSourceToOtherClasses() async throws {
        let server = try await MetadataServer.start(document: Remote.document([GatewayHarness.idpPair]))
        defer { Task { await server.stop() } }
        let rotated = Remote.document([MetadataTrustTests.nextPair], validUntil: Date().addingTimeInterval(8 * 86_400))
        // Listening where `localhost` resolves first: the address the redirect's hop is pinned to.
        let localhost = try #require(await HostResolver.resolve("localhost").first).text
        let target = try await MetadataServer.start(document: rotated, host: localhost)
        defer { Task { await target.stop() } }
        try await Remote.withSource(server.url) { harness, cache async throws in
            try await Self.expectRefused(
                [
                    "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/metadata", "http://[::ffff:169.254.169.254]/metadata",
                    "http://0xa9fea9fe/metadata", "http://10.0.0.1/metadata", "http://192.168.0.1/metadata", "http://172.16.0.1/metadata",
                    "http://[fd00:ec2::254]/metadata", "http://0.0.0.0/metadata", "http://224.0.0.1/metadata",
                ], server, trap: target, harness)
            server.set(mode: .redirect("http://localhost:\(Self.port(target))/metadata"))
            #expect(try await Remote.eventually { try await harness.exchangeV1(Remote.signed(MetadataTrustTests.nextIdP)).status == 204 })
            #expect(target.requests >= 1)
        }
    }
}
