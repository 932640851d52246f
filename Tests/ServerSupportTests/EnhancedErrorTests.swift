import Foundation
import Testing

@testable import ServerSupport

/// The one rendering of the backend's enhanced error shape, used by the gateway and the reference
/// upstream: the fields in the order of the backend's examples, the documented types (`details` a
/// string), the documented `action` of each code, XML for REST API v1.
@Suite("Enhanced errors")
struct EnhancedErrorTests {
    @Test("JSON: fields in the documented order, details a string, the code's documented action")
    func jsonShape() {
        let error = EnhancedError(
            code: .invalidParameterSAMLResponse, httpStatus: 400, message: "bad", details: "signature_invalid; parameter=SAMLResponse")
        #expect(
            error.json(trace: "req-1", helpURL: "https://example.test/errors")
                == #"{"action":"none","status":400,"code":"invalid_parameter_saml_response","message":"bad","#
                + #""details":"signature_invalid; parameter=SAMLResponse","helpUrl":"https://example.test/errors","trace":"req-1"}"#)
    }

    @Test("details and helpUrl are left out when nil; trace is null without a request id")
    func optionalFields() throws {
        let error = EnhancedError(code: .networkConnectionTimeout, httpStatus: 502, message: "quote \" backslash \\ newline \n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(error.json(trace: nil, helpURL: nil).utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["action", "status", "code", "message", "trace"])
        #expect(object["trace"] is NSNull)
        #expect(object["message"] as? String == "quote \" backslash \\ newline \n")
        // A retry code keeps its documented status (403) whatever the HTTP status (502).
        #expect(object["status"] as? Int == 403)
        #expect(object["action"] as? String == "retry")
    }

    @Test("the body status is the HTTP status when the code documents it, else the code's usual one")
    func bodyStatus() {
        #expect(BackendErrorCode.internalError.status(forHTTP: 405) == 405)
        #expect(BackendErrorCode.internalError.status(forHTTP: 503) == 500)
        #expect(BackendErrorCode.unknownIntegration.status(forHTTP: 400) == 400)
        #expect(BackendErrorCode.invalidAccessTokenClientApplication.status(forHTTP: 400) == 401)
        for code in BackendErrorCode.allCases {
            #expect([400, 401, 403, 404, 405, 410, 412, 500].contains(code.status(forHTTP: 503)), "\(code)")
        }
    }

    @Test("XML for REST API v1: the <error> element, markup escaped, controls replaced")
    func xml() {
        let error = EnhancedError(code: .invalidRequestor, httpStatus: 400, message: "a < b & \u{1}", details: "missing_parameter")
        let text = error.xml(trace: "t-1", helpURL: "https://example.test/?a=1&b=2")
        #expect(
            text == "<?xml version=\"1.0\" encoding=\"UTF-8\"?><error><action>none</action><status>400</status><code>invalid_requestor</code>"
                + "<message>a &lt; b &amp; \u{FFFD}</message><details>missing_parameter</details>"
                + "<helpUrl>https://example.test/?a=1&amp;b=2</helpUrl><trace>t-1</trace></error>")
    }

    @Test("the API of a path and the format a client asks for")
    func apiAndFormat() {
        #expect(BackendAPI(path: "/api/v1/tokens/authn") == .v1)
        #expect(BackendAPI(path: "/API/V1") == .v1)
        #expect(BackendAPI(path: "/api/v1?x") == .v1)
        #expect(BackendAPI(path: "/api/v10/x") == .v2)
        #expect(BackendAPI(path: "/api/v2/sp/profiles") == .v2)
        #expect(BackendAPI(path: "/o/client/register") == .v2)
        #expect(ErrorFormat(api: .v1, accept: "application/xml") == .xml)
        #expect(ErrorFormat(api: .v1, accept: "text/xml; q=0.9, application/json") == .xml)
        #expect(ErrorFormat(api: .v1, accept: "application/json, application/xml") == .json)
        #expect(ErrorFormat(api: .v1, accept: nil) == .json)
        #expect(ErrorFormat(api: .v2, accept: "application/xml") == .json)
    }

    @Test("every action the codes carry is one the backend documents")
    func actions() {
        let documented: Set<String> = ["none", "configuration", "application-registration", "authentication", "authorization", "retry"]
        #expect(Set(ErrorAction.allCases.map(\.rawValue)) == documented)
    }
}
