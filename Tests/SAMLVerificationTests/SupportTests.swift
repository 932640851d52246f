import CLITestSupport
import Foundation
import SAMLEncoding
import SAMLVerification
import TestIdP
import Testing

@Suite struct SupportTests {
    func normalize(_ text: String) -> String {
        let input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count)
        let n = input.withUnsafeBytes { i in output.withUnsafeMutableBytes { WhitespaceNormalizer.normalize(i, into: $0) } }
        return String(decoding: output[..<n], as: UTF8.self)
    }

    @Test func cookbookNormalization() {
        #expect(normalize("  a \t\t b  ") == "a b")
        #expect(normalize("a \n b") == "a  b")
        #expect(normalize("a\r\nb\u{85}c\u{2028}d\u{2029}e") == "abcde")
        #expect(normalize("\n\n") == "")
        #expect(normalize("<a>\n  <b/>\n</a>") == "<a> <b/></a>")
    }

    @Test func replayCacheExpiresAndFailsClosedWhenFull() {
        let cache = InMemoryReplayCache(capacity: 2)
        let now = Date()
        #expect(cache.insertIfAbsent("a", expiresAt: now + 10, now: now) == .recorded)
        #expect(cache.insertIfAbsent("a", expiresAt: now + 10, now: now) == .replayed)
        #expect(cache.insertIfAbsent("a", expiresAt: now + 30, now: now + 11) == .recorded)  // expired: new use
        #expect(cache.insertIfAbsent("b", expiresAt: now + 40, now: now + 11) == .recorded)
        // Full of live ids: a new one is refused, and no live one is forgotten.
        #expect(cache.insertIfAbsent("c", expiresAt: now + 50, now: now + 11) == .full)
        #expect(cache.insertIfAbsent("a", expiresAt: now + 30, now: now + 12) == .replayed)
        #expect(cache.insertIfAbsent("b", expiresAt: now + 40, now: now + 12) == .replayed)
        #expect(cache.count == 2)
        // Once "a" has expired there is room again.
        #expect(cache.insertIfAbsent("c", expiresAt: now + 50, now: now + 31) == .recorded)
    }

    @Test func trustStoreFromDirectory() throws {
        let root = TestScratch.directory("truststore")
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent(Fixtures.mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Fixtures.rotatedPair.certificatePEM.write(to: dir.appendingPathComponent("a-next.pem"), atomically: true, encoding: .utf8)
        try (Fixtures.rsaPair.certificatePEM + Fixtures.ecPair.certificatePEM).write(
            to: dir.appendingPathComponent("b-current.pem"), atomically: true, encoding: .utf8)
        try "https://idp.testmvpd.example.com/saml2/idp\n".write(to: dir.appendingPathComponent("issuer"), atomically: true, encoding: .utf8)

        let reloadable = try ReloadableTrustStore(directory: root.path)
        let provider = try #require(reloadable.current.provider(for: Fixtures.mvpd))
        #expect(provider.keys.count == 3)
        #expect(provider.issuer == "https://idp.testmvpd.example.com/saml2/idp")
        let verifier = Verifier(trustStore: reloadable.current, replayCache: nil)
        #expect(Fixtures.code(Fixtures.issue(.assertion, idp: Fixtures.ecIdP), verifier) == nil)

        // Reload after removing the current key: the old signer is no longer trusted.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("b-current.pem"))
        try reloadable.reload()
        #expect(Fixtures.code(Fixtures.issue(.assertion), Verifier(trustStore: reloadable.current, replayCache: nil)) == .keyNotTrusted)
        // A broken reload keeps the previous snapshot.
        try "not a pem".write(to: dir.appendingPathComponent("c-bad.pem"), atomically: true, encoding: .utf8)
        #expect(throws: TrustStoreError.self) { try reloadable.reload() }
        #expect(reloadable.current.provider(for: Fixtures.mvpd)?.keys.count == 1)
    }

    @Test func keygenWritesPEMFiles() throws {
        let dir = TestScratch.directory("keygen").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pair = try TestIdP.keygen(outDir: dir, algorithm: .p256)
        let key = try String(contentsOfFile: dir + "/key.pem", encoding: .utf8)
        let cert = try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8)
        #expect(key == pair.privateKeyPEM && cert.contains("BEGIN CERTIFICATE"))
        let bytes = try TestIdP.issue(keyPath: dir + "/key.pem", certificatePath: dir + "/cert.pem", options: Fixtures.options(.both))
        #expect(Fixtures.code(String(decoding: bytes, as: UTF8.self), Fixtures.verifier([pair])) == nil)
    }
}
