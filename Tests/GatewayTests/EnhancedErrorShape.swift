import Foundation
import GatewayTestSupport
import ServerSupport
import Testing

/// What a refusal in the backend's enhanced error shape must look like, whoever sent it: the
/// fields in the documented order with the documented types, `code` a published one, `action`
/// the one published for it, `status` from the documented set, `trace` the request id.
enum EnhancedErrorShape {
    /// The fields, in the order of the backend's examples.
    static let fields = ["action", "status", "code", "message", "details", "helpUrl", "trace"]
    /// The `status` values the backend documents.
    static let statuses: Set<Int> = [400, 401, 403, 404, 405, 410, 412, 500]

    /// The error's fields as text (JSON numbers and strings alike), or `nil` when the body is not
    /// an enhanced error of `format`.
    static func fields(_ reply: GatewayHarness.Reply, _ format: ErrorFormat) -> [(String, String)]? {
        switch format {
        case .json: jsonFields(reply)
        case .xml: xmlFields(reply.body)
        }
    }

    /// Checks `reply` and returns its `code` (nil when it is not an enhanced error at all).
    @discardableResult
    static func check(
        _ reply: GatewayHarness.Reply, _ format: ErrorFormat = .json, trace: String?, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> BackendErrorCode? {
        #expect(
            reply.headers.first(name: "Content-Type")?.hasPrefix(format.contentType) == true, "\(label): Content-Type", sourceLocation: sourceLocation
        )
        guard let found = fields(reply, format) else {
            Issue.record("\(label): not an enhanced error: \(reply.status) \(reply.body)", sourceLocation: sourceLocation)
            return nil
        }
        let names = found.map(\.0)
        #expect(
            names == fields.filter(names.contains), "\(label): fields in the documented order, no others: \(names)", sourceLocation: sourceLocation)
        let value = Dictionary(found, uniquingKeysWith: { first, _ in first })
        guard let code = value["code"].flatMap(BackendErrorCode.init(rawValue:)) else {
            Issue.record("\(label): code \(value["code"] ?? "nil") is not a published one", sourceLocation: sourceLocation)
            return nil
        }
        #expect(value["action"] == code.action.rawValue, "\(label): the action published for \(code.rawValue)", sourceLocation: sourceLocation)
        let status = value["status"].flatMap { Int($0) }
        #expect(status.map(statuses.contains) == true, "\(label): status \(value["status"] ?? "nil") documented", sourceLocation: sourceLocation)
        #expect(
            status.map(code.documentedStatuses.contains) == true, "\(label): a status published for \(code.rawValue)", sourceLocation: sourceLocation)
        #expect(status == code.status(forHTTP: reply.status), "\(label): status for HTTP \(reply.status)", sourceLocation: sourceLocation)
        #expect(value["message"].map { !$0.isEmpty } == true, "\(label): message", sourceLocation: sourceLocation)
        #expect(value["helpUrl"].map { $0.hasPrefix("https://") } ?? true, "\(label): helpUrl", sourceLocation: sourceLocation)
        #expect(value["trace"] == trace, "\(label): trace \(value["trace"] ?? "nil"), expected \(trace ?? "nil")", sourceLocation: sourceLocation)
        return code
    }

    /// The JSON object's members in body order, each a string or an integer (`details` must be a
    /// string, `status` an integer); `nil` for anything else.
    static func jsonFields(_ reply: GatewayHarness.Reply) -> [(String, String)]? {
        guard let object = reply.json else { return nil }
        var found: [(String, String)] = []
        for name in object.keys {
            switch (name, object[name]) {
            case ("status", let number as Int): found.append((name, String(number)))
            case ("status", _): return nil
            case (_, let text as String): found.append((name, text))
            default: return nil
            }
        }
        // Object keys have no order: take the order in which they appear in the body.
        let body = reply.body
        return found.sorted {
            (body.range(of: "\"\($0.0)\":")?.lowerBound ?? body.endIndex) < (body.range(of: "\"\($1.0)\":")?.lowerBound ?? body.endIndex)
        }
    }

    /// The children of `<error>` in order, with their text (no markup inside; entities kept
    /// escaped); `nil` when the body is not one `<error>` element after an XML declaration.
    static func xmlFields(_ body: String) -> [(String, String)]? {
        guard body.hasPrefix("<?xml"), let open = body.range(of: "<error>"), let close = body.range(of: "</error>", options: .backwards),
            open.upperBound <= close.lowerBound, body[close.upperBound...].allSatisfy(\.isWhitespace)
        else { return nil }
        var rest = body[open.upperBound..<close.lowerBound]
        var found: [(String, String)] = []
        while !rest.isEmpty {
            guard rest.first == "<", let end = rest.firstIndex(of: ">") else { return nil }
            let name = String(rest[rest.index(after: rest.startIndex)..<end])
            let text = rest[rest.index(after: end)...]
            guard !name.isEmpty, name.allSatisfy(\.isLetter), let closing = text.range(of: "</\(name)>") else { return nil }
            let value = String(text[..<closing.lowerBound])
            guard !value.contains("<") else { return nil }
            found.append((name, value))
            rest = text[closing.upperBound...]
        }
        return found
    }
}
