import Synchronization

/// Collects steps and prints each as it happens, aligned for reading.
package final class DemoTranscript: Sendable {
    private let steps = Mutex<[DemoStep]>([])
    private let output: @Sendable (String) -> Void

    package init(output: @escaping @Sendable (String) -> Void) {
        self.output = output
    }

    package var all: [DemoStep] { steps.withLock { $0 } }

    package var passed: Bool { all.allSatisfy(\.passed) }

    func heading(_ text: String) {
        output("\n== " + text + "\n")
    }

    func note(_ text: String) {
        output("   " + text + "\n")
    }

    func add(_ step: DemoStep) {
        steps.withLock { $0.append(step) }
        let number = (step.number < 10 ? " " : "") + String(step.number)
        let status = step.status.map(String.init) ?? "   "
        var line = "  \(step.passed ? "ok  " : "FAIL") \(number). \(Self.pad(step.title, 28)) \(Self.pad(step.call, 52)) \(status)  \(step.decisive)"
        if !step.passed { line += "   (cookbook: \(step.expected))" }
        output(line + "\n")
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

// MARK: - Steps

/// One line of the transcript: a call the app (or the VSA framework, or the user on a second
/// screen) makes, what came back, and whether it is what the cookbook says.
package struct DemoStep: Sendable {
    package var number: Int
    package var title: String
    /// `GET /api/v1/checkauthn`, or `VSA` for a step on the device.
    package var call: String
    /// HTTP status, `nil` for device-side steps.
    package var status: Int?
    /// The field that decides the step (`actionName=partner_profile`, `tokenSource=Apple`,
    /// `code=invalid_header_pfs_permission_access_not_granted` …).
    package var decisive: String
    /// What the cookbook says, as `STATUS decisive` (or `decisive` alone).
    package var expected: String
    package var passed: Bool
}
