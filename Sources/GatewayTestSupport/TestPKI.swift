import AsyncHTTPClient
import CLITestSupport
import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority of the tests' own and the certificates it signs (P-256, made in
/// process with swift-certificates): server certificates for `localhost` and `127.0.0.1`, client
/// certificates, expired or not yet valid ones, written as PEM files the gateway reads.
package struct TestPKI: Sendable {
    package let directory: String
    /// The authority's key (raw: Crypto's key type is not `Sendable`).
    private let caKeyBytes: Data
    private let caName: DistinguishedName

    /// A fresh authority (`ca.pem`) in a scratch directory.
    package init(name: String = "Test CA") throws {
        directory = TestScratch.directory("samlgate-pki").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let caKey = P256.Signing.PrivateKey()
        caKeyBytes = caKey.rawRepresentation
        caName = try DistinguishedName { CommonName(name) }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600,
            notValidAfter: now + 30 * 86_400, issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }, issuerPrivateKey: .init(caKey))
        try ca.serializeAsPEM().pemString.write(toFile: caPath, atomically: true, encoding: .utf8)
    }

    package var caPath: String { directory + "/ca.pem" }

    /// `<name>.pem` and `<name>.key`, signed by this authority; returns the two paths.
    /// - Parameters:
    ///   - commonName: the subject's CN (an `O=Example` beside it when `organization` is given).
    ///   - server: a server certificate for `localhost` and `127.0.0.1`; else a client certificate.
    ///   - validFrom, validFor: seconds from now; a negative start and a short life make an expired one.
    ///   - names: a server certificate's subject alternative names in place of `localhost` and
    ///     `127.0.0.1` (an IPv4 address is an IP-address name, anything else a DNS name); empty:
    ///     none at all (the common name alone names it).
    @discardableResult
    package func issue(
        _ name: String, commonName: String, organization: String? = nil, server: Bool = true, validFrom: TimeInterval = -60,
        validFor: TimeInterval = 10 * 86_400, names: [String]? = nil
    ) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let caKey = try P256.Signing.PrivateKey(rawRepresentation: caKeyBytes)
        let subject = try DistinguishedName {
            if let organization { OrganizationName(organization) }
            CommonName(commonName)
        }
        let start = Date() + validFrom
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: start, notValidAfter: start + validFor,
            issuer: caName, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if server {
                    let alternatives = (names ?? ["localhost", "127.0.0.1"]).map(Self.generalName)
                    if !alternatives.isEmpty { SubjectAlternativeNames(alternatives) }
                    try ExtendedKeyUsage([.serverAuth])
                } else {
                    try ExtendedKeyUsage([.clientAuth])
                }
            }, issuerPrivateKey: .init(caKey))
        let paths = (directory + "/\(name).pem", directory + "/\(name).key")
        try certificate.serializeAsPEM().pemString.write(toFile: paths.0, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: paths.1, atomically: true, encoding: .utf8)
        return paths
    }

    private static func generalName(_ name: String) -> GeneralName {
        let octets = name.split(separator: ".").compactMap { UInt8($0) }
        return octets.count == 4 ? .ipAddress(ASN1OctetString(contentBytes: ArraySlice(octets))) : .dnsName(name)
    }

    /// An HTTP client trusting this authority (HTTP/2 by ALPN when the server offers it), with
    /// the client certificate `certificate` (a name given to ``issue(_:commonName:organization:server:validFrom:validFor:)``).
    package func client(certificate: String? = nil, http1Only: Bool = false) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caPath))
        if let certificate {
            tls.certificateChain = try NIOSSLCertificate.fromPEMFile(directory + "/\(certificate).pem").map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: directory + "/\(certificate).key", format: .pem))
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.decompression = .disabled
        // Short: a handshake the gateway refuses is retried by the client until this runs out.
        configuration.timeout = .init(connect: .seconds(2), read: .seconds(30))
        if http1Only { configuration.httpVersion = .http1Only }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Publishes a pair where a server reads one (`to`), as a renewal tool does: the key file,
    /// then the certificate file, each replaced whole.
    package static func publish(_ pair: (certificate: String, key: String), to target: (certificate: String, key: String)) throws {
        for (from, to) in [(pair.key, target.key), (pair.certificate, target.certificate)] {
            try Data(contentsOf: URL(fileURLWithPath: from)).write(to: URL(fileURLWithPath: to), options: .atomic)
        }
    }

    /// The subject line of the certificate a TLS server on `port` presents (`openssl s_client`),
    /// or `nil` when the handshake fails.
    package static func servedSubject(port: Int) throws -> String? {
        let result = try openssl(["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"], input: "")
        guard let line = result.split(separator: "\n").first(where: { $0.hasPrefix("subject=") }) else { return nil }
        return String(line.dropFirst("subject=".count)).trimmingCharacters(in: .whitespaces)
    }

    /// `openssl` with `arguments`, `input` on its standard input; what it wrote (both streams).
    @discardableResult
    package static func openssl(_ arguments: [String], input: String = "") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
