import ServerSupport

extension GatewayError {
    /// The enhanced-error JSON body; `trace` is the request id.
    public func jsonBody(trace: String, helpURL: String) -> String {
        var details = JSONLine()
        for (key, value) in self.details {
            switch value {
            case .string(let text): details.add(key, text)
            case .integer(let number): details.add(key, number)
            }
        }
        var body = JSONLine()
        body.add("status", status)
        body.add("code", code)
        body.add("message", message)
        body.add("details", json: details.json)
        body.add("helpUrl", helpURL + "#" + code.lowercased())
        body.add("trace", trace)
        body.add("action", action.rawValue)
        return body.json
    }
}
