import Hummingbird
import ServerSupport

/// An enhanced error decided before the response is built (the request's trace id and the
/// format the client asks for are added then).
struct Refusal: Error, Sendable {
    var status: Int
    var code: BackendErrorCode
    var message: String
    var details: String?

    init(_ status: Int, _ code: BackendErrorCode, _ message: String, details: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    func response(for request: Request) -> Response {
        ReferenceReply.error(status, code, message, for: request, details: details)
    }
}
