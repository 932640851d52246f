import Foundation
import Hummingbird
import NIOCore
import ServerSupport

/// swift-http-types' `HTTPField` (Hummingbird re-exports `HTTPFields` only).
typealias Field = HTTPFields.Element

/// The reference upstream's answers: JSON bodies, the backend's enhanced errors, OAuth errors,
/// redirects and the login page.
enum ReferenceReply {
    static func json(_ status: Int, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return body(status, "application/json", Array(data))
    }

    /// The enhanced error shape, rendered by the same ``EnhancedError`` the gateway answers with:
    /// JSON, or XML on REST API v1 when the client's `Accept` asks for it; `trace` is the request
    /// id the gateway added.
    static func error(_ status: Int, _ code: BackendErrorCode, _ message: String, for request: Request, details: String? = nil) -> Response {
        let error = EnhancedError(code: code, httpStatus: status, message: message, details: details)
        let format = ErrorFormat(api: BackendAPI(path: request.uri.path), accept: request.headers[.accept])
        let trace = request.headers[Field.Name("X-Request-Id")!].flatMap { $0.isEmpty ? nil : $0 }
        return body(status, format.contentType, Array(error.render(format, trace: trace, helpURL: EnhancedError.backendHelpURL).utf8))
    }

    /// An enhanced error inside a larger body (a denied decision): the same rendering, read back
    /// as an object for `JSONSerialization`.
    static func errorObject(_ status: Int, _ code: BackendErrorCode, _ message: String, trace: String?) -> [String: Any] {
        let error = EnhancedError(code: code, httpStatus: status, message: message)
        let object = try? JSONSerialization.jsonObject(with: Data(error.json(trace: trace, helpURL: EnhancedError.backendHelpURL).utf8))
        return object as? [String: Any] ?? [:]
    }

    /// OAuth 2.0 errors of the client registration endpoints: `{"error": code}`.
    static func oauth(_ code: String) -> Response {
        json(400, ["error": code])
    }

    static func empty(_ status: Int) -> Response {
        Response(status: .init(code: status))
    }

    static func body(_ status: Int, _ contentType: String, _ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func redirect(_ location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .found, headers: headers)
    }

    static func html(_ status: Int, _ text: String) -> Response {
        body(status, "text/html; charset=utf-8", Array(text.utf8))
    }

    /// Epoch milliseconds.
    static func millis(_ date: Date) -> Int { Int(date.timeIntervalSince1970 * 1000) }

    /// Text escaped for an HTML attribute or element.
    static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Percent-encodes a query value (unreserved characters kept).
    static func escapeQuery(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .init(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? ""
    }
}
