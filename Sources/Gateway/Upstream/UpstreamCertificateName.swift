import Glibc
import NIOCore
import NIOSSL
import ServerSupport
import X509

/// The name an `https://` upstream's certificate must carry, checked as RFC 6125 and the
/// CA/Browser Forum read it (what curl and Go check), after swift-nio-ssl's own check, which is
/// laxer in two ways: it accepts a certificate naming the address connected to in place of the
/// host name, and a certificate without subject alternative names whose common name is the host.
///
/// - An upstream named by DNS (`https://backend.internal`) needs a DNS name among the
///   certificate's subject alternative names that stands for it (``CertificateName``).
/// - An upstream named by address (`https://10.0.0.5`) needs that address among the
///   certificate's IP-address names.
///
/// The common name is never read. Checked in the handshake (swift-nio-ssl's additional
/// verification), so a certificate that fails is a failed connection: nothing is sent on it.
enum UpstreamCertificateName {
    struct Mismatch: Error, CustomStringConvertible {
        let host: String
        var description: String {
            "the upstream's certificate does not name \(host) among its subject alternative names"
        }
    }

    /// The handler that checks the name in the handshake, after the chain and swift-nio-ssl's
    /// own name check pass.
    static func handler(context: NIOSSLContext, host: String, serverName: String?) throws -> NIOSSLClientHandler {
        // swift-nio-ssl's only hook that runs after its own verification and before the handshake
        // completes (underscored: pinned with the package version).
        try NIOSSLClientHandler._makeSSLClientHandler(context: context, serverHostname: serverName) { certificate, channel in
            do {
                try check(certificate, host: host)
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// Throws ``Mismatch`` unless `certificate` names `host` as above.
    static func check(_ certificate: NIOSSLCertificate, host: String) throws {
        let parsed = try Certificate(derEncoded: certificate.toDERBytes())
        let names = try parsed.extensions.subjectAlternativeNames.map(Array.init) ?? []
        if let address = addressBytes(host) {
            for case .ipAddress(let octets) in names where octets.bytes.elementsEqual(address) { return }
        } else {
            for case .dnsName(let name) in names where CertificateName.matches(host: host, dnsName: name) { return }
        }
        throw Mismatch(host: host)
    }

    /// `host`'s bytes when it is an IPv4 or IPv6 address (brackets aside), else `nil`.
    static func addressBytes(_ host: String) -> [UInt8]? {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
