/// Whether a DNS name of a server's certificate stands for the host a client meant to reach, as
/// RFC 6125 §6.4 and the CA/Browser Forum read it (what curl and Go check): equal ignoring ASCII
/// case and a final dot, or a wildcard `*` as the whole first label standing for exactly one
/// label of a host, never for a top-level domain alone (`*.com`) nor part of a label (`b*.com`).
/// Shared by the checks on the gateway's `https://` upstreams and on `rediss://` Redis servers.
public enum CertificateName {
    public static func matches(host: String, dnsName: String) -> Bool {
        let host = normal(host)
        let name = normal(dnsName)
        guard !host.isEmpty, !name.isEmpty else { return false }
        if host == name { return true }
        guard name.hasPrefix("*."), let dot = host.firstIndex(of: "."), dot != host.startIndex else { return false }
        let suffix = name.dropFirst(2)
        return suffix.contains(".") && host[host.index(after: dot)...] == suffix
    }

    private static func normal(_ text: String) -> String {
        let lower = text.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }
}
