/// One error in the backend's enhanced error shape (`action`, `status`, `code`, `message`,
/// `details`, `helpUrl`, `trace`), rendered the same way by the gateway and the reference
/// upstream, so the two cannot drift apart in what a client sees.
///
/// `code` is always one the backend publishes (``BackendErrorCode``) and `action` the one it
/// documents for that code; `details` is a string or absent, as the backend documents it.
public struct EnhancedError: Sendable {
    /// The body's `status`: one the backend documents for `code` (see
    /// ``BackendErrorCode/status(forHTTP:)``); the HTTP status of the answer may differ.
    public var status: Int
    public var code: BackendErrorCode
    /// For people; never SAML content, NameIDs, attribute values or device ids.
    public var message: String
    /// More context, when there is any to give (the gateway puts its own reason here).
    public var details: String?

    public var action: ErrorAction { code.action }

    /// - Parameter httpStatus: the status of the HTTP answer; the body's `status` is derived from
    ///   it and the code.
    public init(code: BackendErrorCode, httpStatus: Int, message: String, details: String? = nil) {
        self.code = code
        self.status = code.status(forHTTP: httpStatus)
        self.message = message
        self.details = details
    }

    /// The backend's public page of enhanced error codes: `helpUrl` when the operator names no
    /// page of their own.
    public static let backendHelpURL =
        "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html"

    /// The body in `format`: the fields in the order of the backend's examples, `details` and
    /// `helpUrl` left out when `nil`, `trace` (the request id) `null` without one.
    public func render(_ format: ErrorFormat, trace: String?, helpURL: String?) -> String {
        switch format {
        case .json: json(trace: trace, helpURL: helpURL)
        case .xml: xml(trace: trace, helpURL: helpURL)
        }
    }

    /// The JSON object on one line.
    public func json(trace: String?, helpURL: String?) -> String {
        var body = JSONLine()
        body.add("action", action.rawValue)
        body.add("status", status)
        body.add("code", code.rawValue)
        body.add("message", message)
        if let details { body.add("details", details) }
        if let helpURL { body.add("helpUrl", helpURL) }
        body.add("trace", trace)
        return body.json
    }

    /// The `<error>` element of REST API v1's XML answers.
    public func xml(trace: String?, helpURL: String?) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><error>"
        func element(_ name: String, _ value: String?) {
            guard let value else { return }
            text += "<\(name)>" + Self.escape(value) + "</\(name)>"
        }
        element("action", action.rawValue)
        element("status", String(status))
        element("code", code.rawValue)
        element("message", message)
        element("details", details)
        element("helpUrl", helpURL)
        element("trace", trace)
        return text + "</error>"
    }

    /// Character data for an XML element: markup characters escaped, and characters XML 1.0
    /// cannot carry (controls but tab and line breaks) replaced, so any message is well-formed.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

// MARK: - Formats

/// How an enhanced error is written: JSON always on REST API v2, JSON or XML on v1 as the
/// client's `Accept` asks (the backend documents XML for v1 only).
public enum ErrorFormat: Sendable {
    case json
    case xml

    /// XML when the API is v1 and the first media range of `Accept` is `application/xml` or
    /// `text/xml`; JSON otherwise (also for `*/*`, no `Accept`, or a list that starts with JSON).
    public init(api: BackendAPI, accept: String?) {
        guard api == .v1, let accept else {
            self = .json
            return
        }
        let type = HTTPFieldValue.mediaType(accept, listElement: true)
        self =
            HTTPFieldValue.equalsIgnoringCase(type, "application/xml") || HTTPFieldValue.equalsIgnoringCase(type, "text/xml") ? .xml : .json
    }

    /// The `Content-Type` of a body in this format.
    public var contentType: String {
        switch self {
        case .json: "application/json"
        case .xml: "application/xml"
        }
    }
}

// MARK: - APIs

/// Which of the backend's APIs a request belongs to, which decides the vocabulary of a refusal:
/// REST API v1 (`/api/v1/…`) has its own list of enhanced error codes and may answer in XML; every
/// other path (REST API v2, client registration, anything the gateway cannot place) is answered
/// with the v2 list, the backend's current one.
public enum BackendAPI: String, Sendable {
    case v1
    case v2

    /// The API of a request path: `/api/v1` and below is v1 (ASCII case ignored, as the gateway
    /// routes), everything else v2. Read on the path's bytes in place: it runs for every request
    /// the gateway routes.
    public init(path: some StringProtocol) {
        self = path.utf8.withContiguousStorageIfAvailable(Self.api(ofPath:)) ?? Self.api(ofPath: Array(path.utf8))
    }

    private static func api(ofPath bytes: UnsafeBufferPointer<UInt8>) -> BackendAPI {
        let prefix: StaticString = "/api/v1"
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return .v2 }
        for index in 0..<count where bytes[index] | 0x20 != prefix.utf8Start[index] | 0x20 {
            return .v2
        }
        guard bytes.count > count else { return .v1 }
        let next = bytes[count]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") ? .v1 : .v2
    }

    private static func api(ofPath bytes: [UInt8]) -> BackendAPI {
        bytes.withUnsafeBufferPointer(api(ofPath:))
    }
}
