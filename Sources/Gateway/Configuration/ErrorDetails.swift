/// The `error-details` setting: what a refusal's `details` says.
package enum ErrorDetails: String, Sendable, CaseIterable {
    /// samlgate's reason and its context (`signature_invalid`, `body_too_large; limit=1048576`).
    case reason
    /// No `details`: the reason is only in the log line and the metrics.
    case none
}
