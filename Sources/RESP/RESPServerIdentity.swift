import NIOCore
import NIOSSL

/// The check `rediss://<name>` adds to NIOSSL's: the certificate must name the host through a
/// DNS name. NIOSSL's host-name verification accepts a certificate when any of its subject
/// alternative names matches, an IP address one included (matched against the address
/// connected to), so a certificate whose only name is the server's IP would stand for any host
/// name that resolves there: whoever can steer name resolution and holds a trusted certificate
/// for their own address could pose as Redis. With an address in the URL NIOSSL is given no
/// name and matches IP address names only, which is what is wanted there.
enum RESPServerIdentity {
    /// Runs after NIOSSL's chain and host-name checks, before anything (AUTH) is written: fails
    /// the handshake unless a DNS name of `certificate` matches `host`. A certificate with no
    /// subject alternative names at all was matched by NIOSSL on its common name, a DNS name too.
    static func verifier(host: String) -> _NIOAdditionalPeerCertificateVerificationCallback {
        { certificate, channel in
            guard dnsNameMatches(host: host, certificate: certificate) else {
                return channel.eventLoop.makeFailedFuture(
                    RESPError(.connect, "the Redis server's certificate does not name \(host) as a DNS name"))
            }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
    }

    static func dnsNameMatches(host: String, certificate: NIOSSLCertificate) -> Bool {
        var names: [String] = []
        var any = false
        for name in certificate._subjectAlternativeNames() {
            any = true
            guard name.nameType == .dnsName else { continue }
            names.append(name.contents.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) })
        }
        guard any else { return true }
        return names.contains { matches(host: host, dnsName: $0) }
    }

    /// RFC 6125: equal ignoring ASCII case and a final dot, or a wildcard `*.` standing for the
    /// whole first label of a host with at least three labels.
    static func matches(host: String, dnsName: String) -> Bool {
        func normal(_ text: String) -> String {
            let lower = text.lowercased()
            return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
        }
        let host = normal(host), name = normal(dnsName)
        guard !host.isEmpty, !name.isEmpty else { return false }
        if host == name { return true }
        guard name.hasPrefix("*."), let dot = host.firstIndex(of: "."), dot != host.startIndex else { return false }
        let suffix = name.dropFirst(2)
        return suffix.contains(".") && host[host.index(after: dot)...] == suffix
    }
}
