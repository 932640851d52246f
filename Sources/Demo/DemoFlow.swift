/// Which cookbook the demo walks.
public enum DemoFlow: String, CaseIterable, Sendable {
    case v1
    case v2
}
