import Foundation
import ServerSupport
import Testing

/// The one renderer of the backend's enhanced error shape, used by the gateway and the reference
/// upstream: the keys in the documented order, details in theirs, escaping, the help anchor.
@Suite("Enhanced error body")
struct EnhancedErrorTests {
    @Test("keys in the documented order; details in the order given; helpUrl ends in the code's anchor")
    func shape() throws {
        let error = EnhancedError(
            status: 413, code: "body_too_large", message: "the request body exceeds the 10-byte limit",
            details: [("parameter", .string("SAMLResponse")), ("limit", .integer(10))], action: .retryAfter)
        let json = error.json(trace: "req-1", helpURL: "https://example.test/errors")
        #expect(
            json
                == #"{"status":413,"code":"body_too_large","message":"the request body exceeds the 10-byte limit","#
                + #""details":{"parameter":"SAMLResponse","limit":10},"helpUrl":"https://example.test/errors#body_too_large","#
                + #""trace":"req-1","action":"retry-after"}"#)
    }

    @Test("no trace is null; the anchor is the code in lower case; text is escaped as JSON")
    func nullTraceAndEscaping() throws {
        let error = EnhancedError(status: 400, code: "VSA503", message: "quote \" backslash \\ newline \n tab \t")
        let json = error.json(trace: nil, helpURL: "h")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["trace"] is NSNull)
        #expect(object["helpUrl"] as? String == "h#vsa503")
        #expect(object["message"] as? String == "quote \" backslash \\ newline \n tab \t")
        #expect((object["details"] as? [String: Any])?.isEmpty == true)
        #expect(object["action"] as? String == "none")
    }
}
