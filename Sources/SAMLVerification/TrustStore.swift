import Foundation

/// An immutable snapshot of the trusted IdP keys and issuers per MVPD.
///
/// Immutable so that every verification sees one consistent configuration without locking;
/// reloading means building a new snapshot and swapping it in (see ``ReloadableTrustStore``).
/// Keys hold only public key values (see ``TrustedKey``), loaded once and shared by all threads.
public final class TrustStore: Sendable {
    public let providers: [String: IdentityProviderTrust]
    /// platform-mapping id → MVPD id.
    private let mvpdByPlatformMappingID: [String: String]

    public init(providers: [IdentityProviderTrust]) {
        var map: [String: IdentityProviderTrust] = [:]
        var mapping: [String: String] = [:]
        for provider in providers {
            map[provider.mvpd] = provider
            mapping[provider.platformMappingID] = provider.mvpd
        }
        self.providers = map
        self.mvpdByPlatformMappingID = mapping
    }

    /// The MVPD whose platform-mapping id is `id` (what a v2 partner status names).
    public func mvpd(forPlatformMappingID id: String) -> String? {
        mvpdByPlatformMappingID[id]
    }

    /// The trust configuration of `mvpd`, or `nil` when it is unknown.
    public func provider(for mvpd: String) -> IdentityProviderTrust? {
        providers[mvpd]
    }

    /// MVPD ids, sorted.
    public var mvpds: [String] { providers.keys.sorted() }

    /// Loads `<directory>/<mvpd>/*.pem` (each file may hold several PEM blocks) and the optional
    /// one-line `<directory>/<mvpd>/issuer` and `<directory>/<mvpd>/platform-mapping-id`. Subdirectories without a PEM file are refused, so a
    /// typo cannot silently leave an MVPD without keys.
    public static func load(directory: String) throws(TrustStoreError) -> TrustStore {
        let fm = FileManager.default
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let names: [String]
        do {
            names = try fm.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw TrustStoreError("cannot read trust store directory \(directory)")
        }
        var providers: [IdentityProviderTrust] = []
        for name in names where !name.hasPrefix(".") {
            let dir = base.appendingPathComponent(name, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: dir.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let files = ((try? fm.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".pem") }.sorted()
            guard !files.isEmpty else {
                throw TrustStoreError("trust store entry \(name) has no .pem file")
            }
            var keys: [TrustedKey] = []
            for file in files {
                let path = dir.appendingPathComponent(file).path
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw TrustStoreError("cannot read \(path)")
                }
                try refusePrivateKey(text, path: path)
                let blocks = pemBlocks(text)
                guard !blocks.isEmpty else { throw TrustStoreError("\(path) holds no PEM block") }
                for (index, block) in blocks.enumerated() {
                    keys.append(try TrustedKey(pem: block, source: blocks.count == 1 ? "\(name)/\(file)" : "\(name)/\(file)#\(index)"))
                }
            }
            let issuer = try oneLineFile(dir.appendingPathComponent("issuer").path)
            let mapping = try oneLineFile(dir.appendingPathComponent("platform-mapping-id").path)
            if let other = providers.first(where: { $0.platformMappingID == (mapping ?? name) }) {
                throw TrustStoreError("trust store entries \(other.mvpd) and \(name) share the platform-mapping-id \(mapping ?? name)")
            }
            providers.append(IdentityProviderTrust(mvpd: name, keys: keys, issuer: issuer, platformMappingID: mapping))
        }
        return TrustStore(providers: providers)
    }

    /// Throws when `text` holds a private key (`PRIVATE KEY`, `RSA PRIVATE KEY`, `EC PRIVATE KEY`,
    /// `ENCRYPTED PRIVATE KEY`, …). xmlsec would load one and trust its public half, so the
    /// store would work, but a signing key would sit on every gateway host, readable by the
    /// service: a trust store holds what the IdP publishes, never what it signs with. `path`
    /// names the file in the error.
    public static func refusePrivateKey(_ text: String, path: String) throws(TrustStoreError) {
        if holdsPrivateKey(text) {
            throw TrustStoreError("\(path) holds a private key; a trust store takes IdP certificates or public keys only")
        }
    }

    /// Whether any PEM label in `text` ends in `PRIVATE KEY`.
    static func holdsPrivateKey(_ text: String) -> Bool {
        text.contains("PRIVATE KEY-----")
    }

    /// The trimmed content of an optional one-line file; `nil` when absent or empty.
    static func oneLineFile(_ path: String) throws(TrustStoreError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw TrustStoreError("cannot read \(path)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Splits text into its `-----BEGIN …-----` … `-----END …-----` blocks.
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring] = []
        var inside = false
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-----BEGIN ") {
                inside = true
                current = [Substring(trimmed)]
            } else if inside {
                current.append(Substring(trimmed))
                if trimmed.hasPrefix("-----END ") {
                    blocks.append(current.joined(separator: "\n") + "\n")
                    inside = false
                }
            }
        }
        return blocks
    }
}
