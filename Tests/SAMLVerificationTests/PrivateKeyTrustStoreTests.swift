import CLITestSupport
import Foundation
import SAMLVerification
import TestIdP
import Testing

/// `TrustStore.load` refuses a `.pem` holding a private key, whatever its PEM label, naming the
/// file; `TrustedKey` refuses one given directly.
@Suite("Trust store: private keys")
struct PrivateKeyTrustStoreTests {
    static let pair = try! IdPKeyPair.generate(.rsa2048, commonName: "private key test")

    static func store(_ files: [String: String]) throws -> String {
        let root = TestScratch.directory("samlgate-pk")
        let dir = root.appendingPathComponent("Cablevision")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return root.path
    }

    static func block(_ label: String) -> String {
        "-----BEGIN \(label)-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END \(label)-----\n"
    }

    @Test("the IdP's real private key, alone or after the certificate in one file, is refused naming the file")
    func realKey() throws {
        for text in [Self.pair.privateKeyPEM, Self.pair.certificatePEM + Self.pair.privateKeyPEM] {
            let root = try Self.store(["idp.pem": text])
            defer { try? FileManager.default.removeItem(atPath: root) }
            do {
                _ = try TrustStore.load(directory: root)
                Issue.record("a private key was accepted as trust")
            } catch {
                #expect(error.message.hasPrefix(root + "/Cablevision/idp.pem holds a private key"), "\(error.message)")
            }
        }
        #expect(throws: TrustStoreError.self) { try TrustedKey(pem: Self.pair.privateKeyPEM, source: "inline") }
        let root = try Self.store(["idp.pem": Self.pair.certificatePEM])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try TrustStore.load(directory: root).providers.count == 1)
    }

    @Test("every private-key PEM label is refused", arguments: ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"])
    func labels(_ label: String) throws {
        let root = try Self.store(["a.pem": Self.pair.certificatePEM, "b.pem": Self.block(label)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            _ = try TrustStore.load(directory: root)
            Issue.record("accepted \(label)")
        } catch {
            #expect(error.message.hasPrefix(root + "/Cablevision/b.pem holds a private key"), "\(error.message)")
        }
    }
}
