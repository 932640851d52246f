import ArgumentParser
import Foundation
import Gateway
import SAMLVerification
import ServerSupport

/// `samlgate trust`: what a trust store trusts.
struct TrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Inspect a trust store (PEM files, SAML metadata).",
        subcommands: [TrustListCommand.self]
    )
}

// MARK: - trust list

/// `samlgate trust list`: per MVPD, its issuer, its keys (fingerprint, algorithm, not-after),
/// where they came from and whether the gateway would use them — read with the gateway's own
/// loader, so what it prints is what `serve`, `verify` and `batch` trust.
struct TrustListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List each MVPD's issuer, keys and status in a trust store.",
        discussion: "Exit status 0 when the store loads and every MVPD is ready, 1 otherwise."
    )

    @Argument(help: "The trust-store directory (default: $SAMLGATE_TRUST_STORE).")
    var directory: String?

    @Option(
        name: .customLong("metadata-cache"), help: "The gateway's metadata cache (default: $SAMLGATE_METADATA_CACHE), for entries with metadata.url.")
    var metadataCache: String?

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Option(
        name: .customLong("config"),
        help: "The serve configuration file the effective policy starts from (default: $SAMLGATE_CONFIG; SAMLGATE_* variables apply too).")
    var config: String?

    /// A certificate expiring sooner than this is listed as `expires_soon`.
    static let soon: TimeInterval = 30 * 86_400

    func run() throws {
        guard let directory = directory ?? ProcessInfo.processInfo.environment["SAMLGATE_TRUST_STORE"] else {
            throw ValidationError("give the trust-store directory (or set SAMLGATE_TRUST_STORE)")
        }
        let store: TrustStore
        do {
            let cache = metadataCache ?? ProcessInfo.processInfo.environment["SAMLGATE_METADATA_CACHE"]
            store = try TrustStore.load(directory: directory, metadataCache: cache)
        } catch {
            StandardStreams.reportFailure(input: directory, code: error.code, message: error.message)
            throw ExitCode.failure
        }
        // The gateway's settings as `serve` would layer them (file, then environment; no flags):
        // what each MVPD's own policy applies over.
        let environment = ProcessInfo.processInfo.environment
        var settings = GatewayConfiguration()
        do {
            if let file = config ?? environment["SAMLGATE_CONFIG"] { try settings.apply(file: file) }
            try settings.apply(environment: environment)
        } catch {
            StandardStreams.writeError("samlgate trust list: \(error.message)\n")
            throw ExitCode(2)
        }
        let now = Date()
        let providers = store.mvpds.compactMap { store.provider(for: $0) }
        StandardStreams.write(
            json ? Self.json(providers, directory: directory, settings: settings, now: now) + "\n" : Self.table(providers, now: now))
        if providers.contains(where: { !$0.isReady(at: now) }) || providers.isEmpty { throw ExitCode.failure }
    }

    static func status(_ provider: IdentityProviderTrust, now: Date) -> String {
        provider.notReadyCode(at: now)?.rawValue ?? "ready"
    }

    /// `certificate_expired`, `expires_soon`, then `weak_key` (admitted by `allow-weak-keys`) and
    /// `expiry_unreadable` (a certificate whose `notAfter` cannot be read), else `ok`.
    static func status(_ key: TrustedKey, now: Date) -> String {
        if let notAfter = key.notAfter {
            if notAfter <= now { return "certificate_expired" }
            if notAfter.timeIntervalSince(now) < soon { return "expires_soon" }
        }
        if key.weakness != nil { return "weak_key" }
        return key.expiryUnreadable ? "expiry_unreadable" : "ok"
    }

    static func instant(_ date: Date?) -> String? {
        date.map { $0.ISO8601Format() }
    }

    static func table(_ providers: [IdentityProviderTrust], now: Date) -> String {
        var rows = [["MVPD", "STATUS", "ISSUER", "VALID UNTIL", "KEY", "ALG", "NOT AFTER", "KEY STATUS", "SOURCE", "POLICY"]]
        for provider in providers {
            let policy = policySummary(provider)
            if provider.keys.isEmpty {
                // Fetched metadata that has not arrived: listed, so the gap is seen.
                rows.append([provider.mvpd, status(provider, now: now), provider.issuer ?? "-", "-", "-", "-", "-", "-", provider.source, policy])
            }
            for key in provider.keys {
                rows.append([
                    provider.mvpd, status(provider, now: now), provider.issuer ?? "-", instant(provider.validUntil) ?? "-",
                    key.shortFingerprint, key.algorithm, instant(key.notAfter) ?? "-", status(key, now: now), key.source, policy,
                ])
            }
        }
        // Names and entityIDs come from files: escaped, a line break cannot forge a row.
        rows = rows.map { $0.map(DisplayText.escape) }
        var widths = Array(repeating: 0, count: rows[0].count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// What the entry's `mode` and `policy` files set, `key=value` separated by spaces; `-` when
    /// neither exists (the gateway's settings apply unchanged).
    static func policySummary(_ provider: IdentityProviderTrust) -> String {
        var parts: [String] = []
        if let mode = provider.mode { parts.append("mode=\(mode.rawValue)") }
        let policy = provider.policy
        if let skew = policy.skew { parts.append("skew=\(format(skew))") }
        if let audience = policy.audience { parts.append("audience=\(audience)") }
        if let lifetime = policy.maxAssertionLifetime { parts.append("max-assertion-lifetime=\(format(lifetime))") }
        if let sha1 = policy.allowSHA1 { parts.append("allow-sha1=\(sha1)") }
        if let inclusive = policy.allowInclusiveCanonicalization { parts.append("allow-inclusive-c14n=\(inclusive)") }
        if let form = policy.forwardForm { parts.append("forward-form=\(formName(form))") }
        return parts.isEmpty ? "-" : parts.joined(separator: " ")
    }

    /// Whole seconds without a fraction.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// The `forward-form` word of a fallback.
    static func formName(_ fallback: NormalizationFallback) -> String {
        fallback == .original ? "signature-preserving" : "cookbook"
    }

    /// The policy a response for `provider` is verified and forwarded under: the entry's own
    /// values over the gateway's `settings`.
    static func effective(_ provider: IdentityProviderTrust, settings: GatewayConfiguration) -> String {
        let policy = provider.policy
        var line = JSONLine()
        line.add("mode", (provider.mode ?? settings.mode).rawValue)
        line.add("skew", json: format(policy.skew ?? settings.skew))
        line.add("audience", policy.audience ?? settings.audience)
        line.add("maxAssertionLifetime", json: policy.maxAssertionLifetime.map(format))
        line.add("allowSHA1", policy.allowSHA1 ?? settings.allowSHA1)
        line.add("allowInclusiveC14n", policy.allowInclusiveCanonicalization ?? VerificationOptions().allowInclusiveCanonicalization)
        line.add("forwardForm", policy.forwardForm.map(formName) ?? settings.forwardForm.rawValue)
        return line.json
    }

    static func json(_ providers: [IdentityProviderTrust], directory: String, settings: GatewayConfiguration, now: Date) -> String {
        // fingerprint → the MVPDs trusting it: a key shared between MVPDs is named as such
        // (the store loads it only when each of them has an issuer binding).
        var holders: [String: [String]] = [:]
        for provider in providers {
            for fingerprint in Set(provider.keys.map(\.fingerprint)) { holders[fingerprint, default: []].append(provider.mvpd) }
        }
        var entries: [String] = []
        for provider in providers {
            var keys: [String] = []
            for key in provider.keys {
                var line = JSONLine()
                line.add("fingerprint", key.fingerprint)
                let others = (holders[key.fingerprint] ?? []).filter { $0 != provider.mvpd }.sorted()
                let shared = (try? JSONSerialization.data(withJSONObject: others)).map { String(decoding: $0, as: UTF8.self) }
                line.add("sharedWith", json: shared ?? "[]")
                line.add("algorithm", key.algorithm)
                line.add("notAfter", instant(key.notAfter))
                line.add("status", status(key, now: now))
                line.add("weakness", key.weakness)
                line.add("source", key.source)
                keys.append(line.json)
            }
            var line = JSONLine()
            line.add("mvpd", provider.mvpd)
            line.add("status", status(provider, now: now))
            line.add("issuer", provider.issuer)
            line.add("entityID", provider.entityID)
            line.add("platformMappingId", provider.platformMappingID)
            line.add("validUntil", instant(provider.validUntil))
            line.add("source", provider.source)
            // The entry's own files; null where the gateway's setting applies.
            line.add("mode", provider.mode?.rawValue)
            var policy = JSONLine()
            policy.add("skew", json: provider.policy.skew.map(format))
            policy.add("audience", provider.policy.audience)
            policy.add("maxAssertionLifetime", json: provider.policy.maxAssertionLifetime.map(format))
            policy.add("allowSHA1", provider.policy.allowSHA1)
            policy.add("allowInclusiveC14n", provider.policy.allowInclusiveCanonicalization)
            policy.add("forwardForm", provider.policy.forwardForm.map(formName))
            line.add("policy", json: policy.json)
            line.add("effective", json: effective(provider, settings: settings))
            if let remote = provider.metadataSource {
                line.add("metadataUrl", remote.displayURL)
                line.add("cachedCopy", remote.hasCachedCopy)
                line.add("cachedCopyProblem", provider.cachedCopyProblem)
            }
            line.add("keys", json: "[" + keys.joined(separator: ",") + "]")
            entries.append(line.json)
        }
        var line = JSONLine()
        line.add("directory", directory)
        line.add("mvpds", json: "[" + entries.joined(separator: ",") + "]")
        return line.json
    }
}
