import SAMLEncoding
import ServerSupport

/// The `SAMLResponse` one HAR entry carries, with what the output keeps of the request: method,
/// URL without its query (queries can hold device ids), and the time it started.
struct HARExchange {
    var value: [UInt8]
    var mvpd: String?
    var meta: String

    private static let responseField: [UInt8] = Array("SAMLResponse".utf8)
    private static let mvpdField: [UInt8] = Array("mvpd".utf8)

    /// The exchange in `entry`, `nil` for a request that has nothing to do with SAML.
    ///
    /// The response is looked for in the form body (`postData.text`, form-decoded once as the
    /// gateway does), then in `postData.params` (taken as-is: any form is accepted later), then
    /// in the URL's query. A request to a v1/v2 exchange path without one is a `missing_field`
    /// record rather than silence.
    static func extract(from entry: JSONValue) throws(RecordError) -> HARExchange? {
        guard let request = entry["request"] else { throw RecordError(.invalidJSON, "the entry has no request") }
        let method = request["method"]?.string
        let url = request["url"]?.string ?? ""
        let (path, query) = split(url: url)
        var meta = JSONLine()
        meta.add("method", method)
        meta.add("url", path)
        meta.add("startedDateTime", entry["startedDateTime"]?.string)

        var value: [UInt8]?
        var mvpd: String?
        if let postData = request["postData"] {
            if let text = postData["text"]?.string, text.contains("SAMLResponse") {
                let fields = try formFields(Array(text.utf8))
                value = fields.response
                mvpd = fields.mvpd
            } else if let params = postData["params"]?.array {
                for param in params {
                    if param["name"]?.string == "SAMLResponse", value == nil { value = param["value"]?.string.map { Array($0.utf8) } }
                    if param["name"]?.string == "mvpd", mvpd == nil { mvpd = param["value"]?.string }
                }
            }
        }
        if value == nil, let query, query.contains("SAMLResponse") {
            let fields = try formFields(Array(query.utf8))
            value = fields.response
            mvpd = mvpd ?? fields.mvpd
        }
        guard let value else {
            if isExchangePath(path) {
                throw RecordError(.missingField, "the \(method ?? "") request to an exchange path carries no SAMLResponse")
            }
            return nil
        }
        return HARExchange(value: value, mvpd: mvpd, meta: meta.json)
    }

    /// The URL before and after its `?` (fragment dropped).
    static func split(url: String) -> (path: String, query: String?) {
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
    }

    /// `POST /api/v1/tokens/authn` or `POST /api/v2/{sp}/profiles/sso/{partner}`, in any URL.
    static func isExchangePath(_ url: String) -> Bool {
        guard let apiRange = url.range(of: "/api/") else { return false }
        let segments = url[apiRange.lowerBound...].split(separator: "/")
        if segments.count == 4, segments[1] == "v1", segments[2] == "tokens", segments[3] == "authn" { return true }
        return segments.count == 6 && segments[1] == "v2" && segments[3] == "profiles" && segments[4] == "sso"
    }

    /// The `SAMLResponse` and `mvpd` fields of a form-encoded text, each decoded once.
    static func formFields(_ form: [UInt8]) throws(RecordError) -> (response: [UInt8]?, mvpd: String?) {
        var response: [UInt8]?
        var mvpd: String?
        for pair in form.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            // Other fields may hold anything (a JSON body, a stray '%'): only the two we read
            // must decode.
            let name = (try? decode(Array(parts[0]))) ?? Array(parts[0])
            let rawValue = parts.count > 1 ? Array(parts[1]) : []
            if name == responseField, response == nil {
                response = try decode(rawValue)
            } else if name == mvpdField, mvpd == nil, let decoded = try? decode(rawValue) {
                mvpd = String(decoding: decoded, as: UTF8.self)
            }
        }
        return (response, mvpd)
    }

    private static func decode(_ bytes: [UInt8]) throws(RecordError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: bytes.count)
        var result: Result<Int, SAMLEncodingError> = .success(0)
        bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { region in
                result = Result { () throws(SAMLEncodingError) in try PercentEncoding.decode(input, into: region, plusAsSpace: true) }
            }
        }
        switch result {
        case .success(let count):
            output.removeSubrange(count...)
            return output
        case .failure(let error):
            throw RecordError(error)
        }
    }
}
