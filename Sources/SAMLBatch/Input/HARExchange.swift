import SAMLEncoding
import ServerSupport

/// The `SAMLResponse` one HAR entry carries, with what the output keeps of the request: method,
/// URL without what can hold personal data (user name and password, path parameters such as
/// `;deviceId=…`, the query, the fragment), and the time it started.
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
        let (fullPath, query) = split(url: url)
        let path = withoutPersonalData(fullPath)
        var meta = JSONLine()
        meta.add("method", method)
        meta.add("url", path)
        meta.add("startedDateTime", entry["startedDateTime"]?.string)

        // Field names are matched decoded (`SAML%52esponse` is `SAMLResponse`), as a backend
        // reads them.
        var value: [UInt8]?
        var mvpd: String?
        if let postData = request["postData"] {
            if let text = postData["text"]?.string {
                (value, mvpd) = try formFields(Array(text.utf8))
            }
            if value == nil, let params = postData["params"]?.array {
                var names: [String] = []
                for param in params {
                    guard let name = param["name"]?.string else { continue }
                    names.append(name)
                    if name == "SAMLResponse" { value = param["value"]?.string.map { Array($0.utf8) } }
                    if name == "mvpd" { mvpd = param["value"]?.string }
                }
                if value != nil { try refuseRepeats(names) }
            }
        }
        if value == nil, let query {
            let fields = try formFields(Array(query.utf8))
            value = fields.response
            mvpd = mvpd ?? fields.mvpd
        }
        guard let value else {
            if isExchangePath(path) {
                throw RecordError(.missingField, "a request to an exchange path carries no SAMLResponse")
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

    /// A URL without query and fragment, stripped of its userinfo (`user:password@`) and of every
    /// path segment's parameters (`/authn;deviceId=…` → `/authn`).
    static func withoutPersonalData(_ url: String) -> String {
        var rest = Substring(url)
        var kept = ""
        if let scheme = rest.range(of: "://") {
            kept += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            // The authority ends at the first slash (or backslash, which browsers read as one).
            let end = rest.firstIndex { $0 == "/" || $0 == "\\" } ?? rest.endIndex
            let authority = rest[..<end]
            kept += authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
            rest = rest[end...]
        }
        return kept + rest.split(separator: "/", omittingEmptySubsequences: false).map { $0.prefix { $0 != ";" } }.joined(separator: "/")
    }

    /// Refuses a second `SAMLResponse` or `mvpd` field among the `names` of a request that
    /// carries a response (in any letter case, as the gateway does): the batch tool would read
    /// one copy and a backend might read the other.
    private static func refuseRepeats(_ names: [String]) throws(RecordError) {
        var seen = Set<String>()
        for name in names {
            let folded = name.lowercased()
            guard folded == "samlresponse" || folded == "mvpd" else { continue }
            guard seen.insert(folded).inserted else {
                throw RecordError(.duplicateKey, "the request gives the \(folded == "mvpd" ? "mvpd" : "SAMLResponse") field twice")
            }
        }
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
        var names: [String] = []
        for pair in form.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            // Other fields may hold anything (a JSON body, a stray '%'): only the two we read
            // must decode.
            let name = (try? decode(Array(parts[0]))) ?? Array(parts[0])
            names.append(String(decoding: name, as: UTF8.self))
            let rawValue = parts.count > 1 ? Array(parts[1]) : []
            if name == responseField, response == nil {
                response = try decode(rawValue)
            } else if name == mvpdField, mvpd == nil, let decoded = try? decode(rawValue) {
                mvpd = String(decoding: decoded, as: UTF8.self)
            }
        }
        if response != nil { try refuseRepeats(names) }
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
