import NIOHTTP1

/// One request of the backend contract, sent unchanged to the reference upstream and to the
/// gateway in front of it (see ``ContractHarness``).
struct ContractRequest: Sendable {
    /// What the case is about, for failure messages.
    var name: String
    var method: HTTPMethod = .POST
    var path: String
    var headers: [(String, String)]
    var body: String

    init(_ name: String, method: HTTPMethod = .POST, path: String, headers: [(String, String)], body: String) {
        self.name = name
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The same request with the header `name` left out.
    func without(_ name: String) -> ContractRequest {
        var copy = self
        copy.headers.removeAll { $0.0.lowercased() == name.lowercased() }
        return copy
    }

    /// The same request with the header `name` set to `value` (replacing any copy).
    func with(_ name: String, _ value: String) -> ContractRequest {
        var copy = without(name)
        copy.headers.append((name, value))
        return copy
    }
}
