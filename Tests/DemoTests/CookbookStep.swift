import Demo
import Testing

/// One step of a cookbook walk as the cookbook prescribes it: the call, the HTTP status and the
/// deciding field. The table in ``CookbookStepTests`` is written from the Adobe Pass cookbooks,
/// independently of the demo's own expectations.
struct CookbookStep: Sendable, CustomTestStringConvertible {
    var flow: DemoFlow
    var scenario: DemoScenario
    var number: Int
    var call: String
    var status: Int?
    var decisive: String

    var testDescription: String { "\(flow.rawValue) \(scenario.rawValue) #\(number) \(call) → \(status.map(String.init) ?? "device") \(decisive)" }
}
