/// The `action` of the backend's enhanced error shape: what the client should do next.
public enum ErrorAction: String, Sendable {
    case none
    case configuration
    case applicationRegistration = "application-registration"
    case authorization
    case authentication
    case degradation
    case retry
    case retryAfter = "retry-after"
}
