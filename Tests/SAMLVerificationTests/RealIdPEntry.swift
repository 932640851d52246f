import Foundation
import Testing

/// One response of the real-IdP corpus (`RealIdP/manifest.json`): where it comes from, the peer
/// test that gives its verdict, and how samlgate must verify it.
struct RealIdPEntry: Decodable, Sendable, CustomTestStringConvertible {
    struct Source: Decodable, Sendable {
        var repository: String
        var path: String
        var commit: String
    }

    /// How the file stores the document: as XML, base64, or base64 of raw DEFLATE (the
    /// redirect binding's compression, which the peer inflates itself).
    enum Encoding: String, Decodable, Sendable {
        case xml
        case base64
        case base64Deflate = "base64-deflate"
    }

    /// `genuine`: valid in the peer's test; `forged`: tampered, re-signed, wrapped or unsigned;
    /// `policy`: signed, but breaking a SAML rule samlgate also applies; `encrypted`: a genuine
    /// encrypted assertion; `peer-stricter`: refused by the peer on a rule samlgate does not
    /// have; `refused-by-design`: valid for the peer, refused by samlgate on purpose.
    enum Kind: String, Decodable, Sendable, CaseIterable {
        case genuine
        case forged
        case policy
        case encrypted
        case peerStricter = "peer-stricter"
        case refusedByDesign = "refused-by-design"
    }

    var id: String
    var file: String
    var encoding: Encoding
    var sha256: String
    var source: Source
    var peerTest: String
    var idp: String
    var kind: Kind
    /// `accept`, or the error code samlgate must answer.
    var expect: String
    var nameID: String?
    var certificate: String?
    var certificateOrigin: String?
    var now: Date
    var audience: String
    var issuer: String?
    var destination: String?
    var inResponseTo: String?
    var allowSHA1: Bool?
    var note: String?

    var testDescription: String { id }
}
