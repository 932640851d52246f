import ArgumentParser
import Demo
import Foundation
import ReferenceUpstream
import ServerSupport

/// `samlgate demo`: plays the streaming app and Apple's VSA framework (the test IdP as the TV
/// provider) and walks the Apple SSO cookbook flows through the gateway, printing each step.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk the Apple SSO cookbook flows (v1, v2) through the gateway and print each step.",
        discussion: """
            Without --gateway, starts its own reference upstream, gateway and test IdP on ephemeral loopback ports and \
            stops them at the end. Exit status 0 only when every step got the outcome the cookbook says it should.
            """)

    @Option(help: "v1, v2 or all.") var flow = "all"
    @Option(help: "happy, denied, unsupported, expired or all.") var scenario = "all"
    @Option(help: "A running gateway's base URL (requires --idp); default: start one.") var gateway: String?
    @Option(help: "Directory with the TV provider's key.pem and cert.pem (the gateway must trust cert.pem).") var idp: String?
    @Option(help: "Reference upstream configuration when the demo starts its own (default: the built-in one).") var config: String?
    @Option(help: "Requestor / service provider id.") var requestor = "REF"
    @Option(help: "TV provider with partner SSO.") var mvpd = "Cablevision"
    @Option(name: .customLong("provider-id"), help: "Its platform-mapping id, as VSA reports it (default: --mvpd).") var providerID: String?
    @Option(name: .customLong("fallback-mvpd"), help: "TV provider without partner SSO (unsupported scenario).") var fallbackMVPD = "SecondScreenTV"

    func validate() throws {
        guard flow == "all" || DemoFlow(rawValue: flow) != nil else { throw ValidationError("--flow must be v1, v2 or all") }
        guard scenario == "all" || DemoScenario(rawValue: scenario) != nil else {
            throw ValidationError("--scenario must be happy, denied, unsupported, expired or all")
        }
        if gateway != nil && idp == nil { throw ValidationError("--gateway needs --idp DIR (the key the gateway's trust store trusts)") }
        if gateway == nil && idp != nil { throw ValidationError("--idp is used with --gateway") }
        if gateway != nil && config != nil { throw ValidationError("--config configures the demo's own upstream; not with --gateway") }
        if let gateway, URL(string: gateway)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--gateway must be an http(s) URL")
        }
    }

    func run() async throws {
        var settings = DemoSettings()
        settings.requestor = requestor
        settings.mvpd = mvpd
        settings.providerID = providerID ?? mvpd
        settings.fallbackMVPD = fallbackMVPD
        // --config describes the local reference upstream, unused with --gateway and --idp.
        let external = gateway != nil && idp != nil
        let reference: ReferenceConfiguration?
        do {
            reference = external ? nil : try config.map { path throws(ConfigurationError) in try ReferenceConfiguration.load(path: path) }
        } catch {
            // The file given with --config: a usage error.
            StandardStreams.writeError("samlgate demo: \(error.message)\n")
            throw ExitCode(2)
        }
        let environment: DemoEnvironment
        do {
            if let gateway, let idp {
                environment = try DemoEnvironment.external(gatewayURL: gateway, idpDirectory: idp)
            } else {
                environment = try await DemoEnvironment.local(configuration: reference ?? .standard)
            }
        } catch {
            StandardStreams.writeError("samlgate demo: cannot start: \(error)\n")
            throw ExitCode(1)
        }
        if let upstream = environment.upstreamURL {
            StandardStreams.write("samlgate demo: gateway \(environment.gatewayURL) → reference upstream \(upstream), test IdP (RSA-2048)\n")
        } else {
            StandardStreams.write("samlgate demo: gateway \(environment.gatewayURL), TV provider key from \(idp ?? "")\n")
        }
        let transcript = DemoTranscript(output: { StandardStreams.write($0) })
        _ = await DemoRunner.run(
            flows: flow == "all" ? DemoFlow.allCases : [DemoFlow(rawValue: flow)!],
            scenarios: scenario == "all" ? DemoScenario.allCases : [DemoScenario(rawValue: scenario)!],
            environment: environment, settings: settings, transcript: transcript)
        await environment.stop()
        let steps = transcript.all
        let failed = steps.filter { !$0.passed }.count
        StandardStreams.write(
            failed == 0
                ? "\nall \(steps.count) steps as the cookbook says\n"
                : "\n\(failed) of \(steps.count) steps differ from the cookbook\n")
        if failed > 0 { throw ExitCode(1) }
    }
}
