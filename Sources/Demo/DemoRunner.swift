import AsyncHTTPClient
import Foundation

/// Runs the chosen flows and scenarios against an environment and tells whether every step got
/// the outcome the cookbook says it should.
package enum DemoRunner {
    package static func run(
        flows: [DemoFlow], scenarios: [DemoScenario], environment: DemoEnvironment,
        settings: DemoSettings = DemoSettings(), transcript: DemoTranscript
    ) async -> Bool {
        let client = DemoHTTP.makeClient()
        let http = DemoHTTP(base: environment.gatewayURL, client: client)
        for flow in flows {
            for scenario in scenarios {
                transcript.heading("\(flow.rawValue) · \(scenario.rawValue): \(scenario.summary)")
                let before = transcript.all.count
                let walk = DemoWalk(
                    http: http, transcript: transcript, settings: settings,
                    vsa: framework(for: scenario, flow: flow, settings: settings, environment: environment))
                switch flow {
                case .v1: await walk.v1(scenario)
                case .v2: await walk.v2(scenario)
                }
                let steps = transcript.all[before...]
                let failed = steps.filter { !$0.passed }.count
                transcript.note(
                    failed == 0
                        ? "\(steps.count) steps, each as the cookbook says"
                        : "\(failed) of \(steps.count) steps differ from the cookbook")
            }
        }
        try? await client.shutdown()
        return transcript.passed
    }

    /// What VSA reports in each scenario. `expired` is the provider profile on the device (v2,
    /// where the app sends the partner status) or the TV provider's assertion (v1, where the
    /// exchange itself fails verification).
    static func framework(for scenario: DemoScenario, flow: DemoFlow, settings: DemoSettings, environment: DemoEnvironment) -> VSAFramework {
        let later = Date().addingTimeInterval(3_600)
        switch scenario {
        case .happy:
            return VSAFramework(idp: environment.idp, accessStatus: "granted", providerID: settings.providerID, providerExpiration: later)
        case .denied:
            return VSAFramework(idp: environment.idp, accessStatus: "denied", providerID: settings.providerID, providerExpiration: later)
        case .unsupported:
            return VSAFramework(idp: environment.idp, accessStatus: "granted", providerID: settings.fallbackMVPD, providerExpiration: later)
        case .expired:
            return VSAFramework(
                idp: environment.idp, accessStatus: "granted", providerID: settings.providerID,
                providerExpiration: flow == .v2 ? Date().addingTimeInterval(-3_600) : later)
        }
    }
}
