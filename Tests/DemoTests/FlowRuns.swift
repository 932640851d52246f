import Demo
import Foundation

/// Each (flow, scenario) walked once per test process, in its own reference upstream + gateway,
/// shared by the per-step tests.
actor FlowRuns {
    static let shared = FlowRuns()
    private var runs: [String: Task<[DemoStep], any Error>] = [:]

    func steps(_ flow: DemoFlow, _ scenario: DemoScenario) async throws -> [DemoStep] {
        let key = flow.rawValue + "/" + scenario.rawValue
        if let run = runs[key] { return try await run.value }
        let run = Task {
            let environment = try await DemoEnvironment.local()
            let transcript = DemoTranscript(output: { _ in })
            _ = await DemoRunner.run(flows: [flow], scenarios: [scenario], environment: environment, transcript: transcript)
            await environment.stop()
            return transcript.all
        }
        runs[key] = run
        return try await run.value
    }
}
