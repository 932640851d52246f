/// One error in the backend's enhanced error shape (`status`, `code`, `message`, `details`,
/// `helpUrl`, `trace`, `action`), rendered the same way by the gateway and the reference upstream,
/// so the two cannot drift apart in what a client sees.
public struct EnhancedError: Sendable {
    /// A value of `details`: the backend uses strings and integers only.
    public enum Detail: Sendable {
        case string(String)
        case integer(Int)
    }

    public var status: Int
    /// The stable code (`"missing_parameter"`, `"signature_invalid"`, …); `helpUrl` ends in its
    /// anchor.
    public var code: String
    /// For people; never SAML content, NameIDs, attribute values or device ids.
    public var message: String
    /// Machine-readable context (`parameter`, `offset`, `limit`, `retryAfter`), in this order.
    public var details: [(String, Detail)]
    public var action: ErrorAction

    public init(status: Int, code: String, message: String, details: [(String, Detail)] = [], action: ErrorAction = .none) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.action = action
    }

    /// The JSON object on one line. `trace` is the request id (`null` without one); `helpURL` is
    /// the page of the error codes, which gets `#` and the code in lower case appended.
    public func json(trace: String?, helpURL: String) -> String {
        var detailsObject = JSONLine()
        for (key, value) in details {
            switch value {
            case .string(let text): detailsObject.add(key, text)
            case .integer(let number): detailsObject.add(key, number)
            }
        }
        var body = JSONLine()
        body.add("status", status)
        body.add("code", code)
        body.add("message", message)
        body.add("details", json: detailsObject.json)
        body.add("helpUrl", helpURL + "#" + code.lowercased())
        body.add("trace", trace)
        body.add("action", action.rawValue)
        return body.json
    }
}
