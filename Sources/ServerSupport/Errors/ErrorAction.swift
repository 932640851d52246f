/// The `action` of the backend's enhanced error shape: what the client should do next. Only the
/// values the backend documents: a client that switches over them knows no others.
public enum ErrorAction: String, Sendable, CaseIterable {
    case none
    case configuration
    case applicationRegistration = "application-registration"
    case authentication
    case authorization
    case retry
}
