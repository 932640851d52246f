// What the reference upstream answers: JSON, HTML and the backend's enhanced errors, the refusals
// handlers throw, and the opaque documents it hands out (the profile request, the media token).

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

// MARK: - Refusals

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

/// Turns a ``Refusal`` thrown by any handler into its enhanced error answer, with the request's
/// trace id — so handlers check with `try` instead of each unwrapping a result.
struct RefusalMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as Refusal {
            return refusal.response(for: request)
        }
    }
}

// MARK: - Opaque documents handed out

/// The profile request the backend hands the app for Apple's VSA framework
/// (`verificationToken`): a SAML `AttributeQuery` naming the attributes the MVPD must release,
/// base64-encoded. The app treats it as opaque; the TV provider answers it with the signed
/// attribute-query response the gateway later verifies.
enum AttributeQuery {
    static let adobeEntityID = "https://saml.sp.auth.adobe.com"

    static func make(id: String, mvpd: ReferenceMVPD, requestor: String, now: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        xml += "<samlp:AttributeQuery xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" "
        xml += "xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" ID=\"\(id)\" Version=\"2.0\" "
        xml += "IssueInstant=\"\(formatter.string(from: now))\" Destination=\"\(ReferenceReply.escapeHTML(mvpd.id))\">"
        xml += "<saml:Issuer>\(adobeEntityID)</saml:Issuer>"
        xml += "<saml:Subject><saml:NameID Format=\"urn:oasis:names:tc:SAML:2.0:nameid-format:unspecified\">"
        xml += ReferenceReply.escapeHTML(requestor) + "</saml:NameID></saml:Subject>"
        for name in mvpd.requiredMetadataFields {
            xml += "<saml:Attribute Name=\"\(ReferenceReply.escapeHTML(name))\" "
            xml += "NameFormat=\"urn:oasis:names:tc:SAML:2.0:attrname-format:basic\"/>"
        }
        xml += "</samlp:AttributeQuery>"
        return Data(xml.utf8).base64EncodedString()
    }
}

/// The short media token: opaque to apps (they pass it to the media verifier), here a base64
/// of a small XML document naming resource, requestor, MVPD and expiry. Not signed — the
/// reference upstream is a stand-in, not a token issuer anyone should trust.
enum MediaToken {
    static func serialize(resource: String, requestor: String, mvpd: String, expires: Date) -> String {
        let xml =
            "<mediaToken><resource>\(ReferenceReply.escapeHTML(resource))</resource><requestor>\(ReferenceReply.escapeHTML(requestor))"
            + "</requestor><mvpd>\(ReferenceReply.escapeHTML(mvpd))</mvpd><expires>\(ReferenceReply.millis(expires))</expires></mediaToken>"
        return Data(xml.utf8).base64EncodedString()
    }
}
