import Hummingbird
import ServerSupport

/// An enhanced error decided before the response is built (the request's trace id is added
/// then).
struct Refusal: Error, Sendable {
    var status: Int
    var code: String
    var message: String
    var action: ErrorAction
    /// `details.parameter`: the parameter or header at fault.
    var parameter: String?

    init(_ status: Int, _ code: String, _ message: String, action: ErrorAction = .none, parameter: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.action = action
        self.parameter = parameter
    }

    func response(trace: String?) -> Response {
        ReferenceReply.error(status, code, message, action: action, trace: trace, details: parameter.map { [("parameter", .string($0))] } ?? [])
    }
}
