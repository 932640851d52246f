import Crypto

/// What a TLS connection established that its requests carry: the version (a recorded span's
/// `tls.protocol.version`) and the client's verified certificate, if it sent one.
struct TLSSession: Sendable {
    /// `1.2` or `1.3`.
    let version: String
    let certificate: ClientCertificate?
}

/// A client's verified certificate (`tls-client-auth`): its subject, for the audit line, and the
/// throttle's key for it, so that clients behind one address (a carrier's NAT) are told apart by
/// what they proved rather than by where they came from.
struct ClientCertificate: Sendable {
    /// RFC 4514 (`CN=app,O=Example`); a certificate authority's own naming, never user data.
    let subject: String
    /// The issuer's name, part of the identity: with several authorities in `tls-client-ca`, one
    /// could issue a certificate with another's client's subject.
    let issuer: String
    let throttleKey: ClientKey

    init(subject: String, issuer: String) {
        self.subject = subject
        self.issuer = issuer
        // A digest, not Swift's per-process hash: a shared throttle compares keys across replicas.
        // Its first 64 bits are the key (``ClientKey`` keeps 64 of an IPv6 address too).
        let digest = Array(SHA256.hash(data: Array(("certificate\0" + issuer + "\0" + subject).utf8)))
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(digest[index])
            low = low << 8 | UInt64(digest[8 + index])
        }
        throttleKey = ClientKey(high: high, low: low)
    }
}
