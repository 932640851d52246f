/// Which cookbook the demo walks.
package enum DemoFlow: String, CaseIterable, Sendable {
    case v1
    case v2
}
