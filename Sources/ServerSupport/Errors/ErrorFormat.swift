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
