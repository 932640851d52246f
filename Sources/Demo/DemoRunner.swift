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

// MARK: - Flows

/// Which cookbook the demo walks.
package enum DemoFlow: String, CaseIterable, Sendable {
    case v1
    case v2
}

// MARK: - Scenarios

/// Which path through a cookbook the demo takes.
package enum DemoScenario: String, CaseIterable, Sendable {
    /// The user is signed in to a TV provider that supports partner SSO and grants access.
    case happy
    /// The user refused the app access to the TV provider account (`invalid_header_pfs_permission_access_not_granted`).
    case denied
    /// The user's TV provider does not support partner SSO: second-screen authentication.
    case unsupported
    /// The TV provider's session on the device has expired.
    case expired

    var summary: String {
        switch self {
        case .happy: return "partner SSO through the gateway"
        case .denied: return "access to the TV provider account denied, second-screen fallback"
        case .unsupported: return "TV provider without partner SSO, second-screen fallback"
        case .expired: return "expired TV provider session, second-screen fallback"
        }
    }
}

// MARK: - Who the demo plays

/// Who the demo plays: the requestor, the TV providers, the resources it asks for. The defaults
/// match the reference upstream's built-in configuration.
package struct DemoSettings: Sendable {
    package var requestor = "REF"
    /// A TV provider with partner SSO.
    package var mvpd = "Cablevision"
    /// Its platform-mapping id (what VSA reports).
    package var providerID = "Cablevision"
    /// A TV provider without partner SSO (the `unsupported` scenario).
    package var fallbackMVPD = "SecondScreenTV"
    /// A resource the MVPD permits, and one it denies.
    package var resource = "REF"
    package var deniedResource = "premium-sports"

    package init() {}
}
