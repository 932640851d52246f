import Foundation
import Hummingbird
import NIOCore
import SAMLEncoding
import ServerSupport

/// swift-http-types' `HTTPField` (Hummingbird re-exports `HTTPFields` only).
typealias Field = HTTPFields.Element

/// The reference upstream's handlers (see ``ReferenceUpstreamServer``).
struct ReferenceRoutes: Sendable {
    let records: ReferenceRecords
    let tokenTTL: TimeInterval
    static let bodyLimit = 4 << 20

    func add(to router: Router<BasicRequestContext>) {
        router.post("/api/v1/tokens/authn") { request, _ in try await exchangeV1(request) }
        router.get("/api/v1/tokens/authn") { request, _ in checkToken(request) }
        router.post("/api/v2/:serviceProvider/profiles/sso/:partner") { request, context in
            try await exchangeV2(request, serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
        router.get("/reference/exchanges") { _, _ in exchanges() }
        for method: HTTPRequest.Method in [.get, .post, .put, .delete, .patch, .head, .options] {
            router.on("/reference/echo/**", method: method) { request, _ in try await echo(request) }
        }
    }

    // MARK: exchanges

    func exchangeV1(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        guard let fields = ReferenceForm.parse(Array(buffer: body)) else {
            return error(400, "malformed_percent_encoding", "the form body has a broken % escape")
        }
        for name in ["requestor", "deviceId", "mvpd", "deviceType", "SAMLResponse"] where (fields[name]?.decoded.isEmpty ?? true) {
            return error(400, "missing_parameter", "the required parameter \(name) is missing")
        }
        if let refusal = checkSAML(fields["SAMLResponse"]!.decoded) { return refusal }
        let requestor = text(fields["requestor"]!.decoded), mvpd = text(fields["mvpd"]!.decoded)
        records.record(
            token: .init(requestor: requestor, mvpd: mvpd, expires: Date().addingTimeInterval(tokenTTL), tokenSource: "Apple"),
            deviceID: text(fields["deviceId"]!.decoded),
            exchange: .init(route: "v1", requestor: requestor, samlResponse: fields["SAMLResponse"]!.raw,
                            requestID: request.headers[Field.Name("X-Request-Id")!]))
        return Response(status: .noContent)
    }

    func exchangeV2(_ request: Request, serviceProvider: String) async throws -> Response {
        var request = request
        guard let authorization = request.headers[.authorization], !authorization.isEmpty else {
            return error(401, "invalid_authorization", "the Authorization header is missing")
        }
        guard let device = request.headers[Field.Name("AP-Device-Identifier")!], !device.isEmpty else {
            return error(400, "missing_parameter", "the AP-Device-Identifier header is missing")
        }
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        guard let fields = ReferenceForm.parse(Array(buffer: body)) else {
            return error(400, "malformed_percent_encoding", "the form body has a broken % escape")
        }
        guard let saml = fields["SAMLResponse"], !saml.decoded.isEmpty else {
            return error(400, "missing_parameter", "the required parameter SAMLResponse is missing")
        }
        if let refusal = checkSAML(saml.decoded) { return refusal }
        let mvpd = providerID(request.headers[Field.Name("AP-Partner-Framework-Status")!]) ?? "unknown"
        let now = Date()
        let expires = now.addingTimeInterval(tokenTTL)
        records.record(
            token: .init(requestor: serviceProvider, mvpd: mvpd, expires: expires, tokenSource: "Apple"), deviceID: device,
            exchange: .init(route: "v2", requestor: serviceProvider, samlResponse: saml.raw,
                            requestID: request.headers[Field.Name("X-Request-Id")!]))
        var profile = JSONLine()
        profile.add("type", "appleSSO")
        profile.add("mvpd", mvpd)
        profile.add("requestor", serviceProvider)
        profile.add("notBefore", Int(now.timeIntervalSince1970 * 1000))
        profile.add("notAfter", Int(expires.timeIntervalSince1970 * 1000))
        profile.add("attributes", [:])
        return json(200, profile.json)
    }

    /// What the backend demands of `SAMLResponse` after its one percent-decoding: no `%` left
    /// (that would be a second encoding layer), valid base64, XML inside.
    func checkSAML(_ value: [UInt8]) -> Response? {
        if value.contains(UInt8(ascii: "%")) {
            return error(400, "double_encoded", "SAMLResponse is still percent-encoded after one decoding")
        }
        var decoded = [UInt8](repeating: 0, count: value.count + 3)
        let count: Int
        do {
            count = try value.withUnsafeBytes { input in
                try decoded.withUnsafeMutableBytes { output in try Base64.decode(input, into: output) }
            }
        } catch _ {
            return error(400, "malformed_base64", "SAMLResponse is not valid base64")
        }
        let xml = decoded[..<count]
        guard xml.first == UInt8(ascii: "<") else {
            return error(400, "invalid_saml", "SAMLResponse does not decode to an XML document")
        }
        return nil
    }

    /// `frameworkProviderInfo.id` of the partner status header, if it can be read.
    func providerID(_ header: String?) -> String? {
        guard let header, let data = Data(base64Encoded: header),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let provider = object["frameworkProviderInfo"] as? [String: Any] else { return nil }
        return provider["id"] as? String
    }

    // MARK: inspection

    func checkToken(_ request: Request) -> Response {
        let query = request.uri.queryParameters
        guard let requestor = query["requestor"].map(String.init), let device = query["deviceId"].map(String.init) else {
            return error(400, "missing_parameter", "requestor and deviceId are required")
        }
        guard let token = records.token(requestor: requestor, deviceID: device) else {
            return error(404, "authentication_token_not_found", "no valid authentication token for this requestor and device")
        }
        var body = JSONLine()
        body.add("requestor", token.requestor)
        body.add("mvpd", token.mvpd)
        body.add("expires", String(Int(token.expires.timeIntervalSince1970 * 1000)))
        body.add("tokenSource", token.tokenSource)
        return json(200, body.json)
    }

    func exchanges() -> Response {
        let items = records.exchanges.map { exchange in
            var item = JSONLine()
            item.add("route", exchange.route)
            item.add("requestor", exchange.requestor)
            item.add("requestId", exchange.requestID)
            item.add("SAMLResponse", exchange.samlResponse)
            return item.json
        }
        return json(200, "[" + items.joined(separator: ",") + "]")
    }

    func echo(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        var headers = HTTPFields()
        headers[Field.Name("X-Echo-Method")!] = request.method.rawValue
        headers[Field.Name("X-Echo-URI")!] = request.uri.string
        var seen = JSONLine()
        for field in request.headers { seen.add(field.name.canonicalName, field.value) }
        headers[Field.Name("X-Echo-Headers")!] = seen.json
        headers[.contentType] = request.headers[.contentType] ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    // MARK: helpers

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func error(_ status: Int, _ code: String, _ message: String) -> Response {
        var body = JSONLine()
        body.add("status", status)
        body.add("code", code)
        body.add("message", message)
        body.add("details", json: "{}")
        body.add("helpUrl", nil as String?)
        body.add("trace", nil as String?)
        body.add("action", "none")
        return json(status, body.json)
    }

    func json(_ status: Int, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
