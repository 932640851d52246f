import Hummingbird
import NIOHTTP1

/// Header handling of a forwarding proxy (RFC 9110 §7.6.1): hop-by-hop headers stay on their
/// hop, `Host` and `Content-Length` are the client library's to set, and `X-Forwarded-*` and
/// `X-Request-Id` are added.
public enum ProxyHeaders {
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "trailers", "transfer-encoding", "upgrade",
    ]

    /// Set by the gateway or the client library, never copied: `Host` and `Content-Length`
    /// follow the upstream URL and the body actually sent.
    static let replaced: Set<String> = ["host", "content-length", "x-request-id"]

    /// The names listed in `Connection` (also hop-by-hop), lower-cased.
    static func connectionTokens(_ values: [String]) -> Set<String> {
        var tokens = Set<String>()
        for value in values {
            for token in value.split(separator: ",") {
                tokens.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return tokens
    }

    /// The request headers for the upstream.
    public static func upstreamRequest(
        _ fields: HTTPFields, authority: String?, clientAddress: String?, requestID: String
    ) -> HTTPHeaders {
        let tokens = connectionTokens(fields[values: .connection])
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count + 3)
        var forwardedFor: String?
        for field in fields {
            let name = field.name.canonicalName
            if hopByHop.contains(name) || tokens.contains(name) || Self.replaced.contains(name) { continue }
            if name == "x-forwarded-for" {
                forwardedFor = forwardedFor.map { $0 + ", " + field.value } ?? field.value
                continue
            }
            headers.add(name: field.name.rawName, value: field.value)
        }
        if let host = authority, !headers.contains(name: "x-forwarded-host") {
            headers.add(name: "X-Forwarded-Host", value: host)
        }
        if let clientAddress {
            headers.add(name: "X-Forwarded-For", value: forwardedFor.map { $0 + ", " + clientAddress } ?? clientAddress)
        } else if let forwardedFor {
            headers.add(name: "X-Forwarded-For", value: forwardedFor)
        }
        if !headers.contains(name: "x-forwarded-proto") {
            headers.add(name: "X-Forwarded-Proto", value: "http")
        }
        headers.add(name: "X-Request-Id", value: requestID)
        return headers
    }

    /// The upstream's response headers for the client.
    static func clientResponse(_ headers: HTTPHeaders, requestID: String) -> HTTPFields {
        let tokens = connectionTokens(headers[canonicalForm: "connection"].map(String.init))
        var fields = HTTPFields()
        for (name, value) in headers {
            let lower = name.lowercased()
            if hopByHop.contains(lower) || tokens.contains(lower) || lower == "x-request-id" { continue }
            guard let fieldName = HeaderField.Name(name) else { continue }
            fields.append(HeaderField(name: fieldName, value: value))
        }
        fields[.requestID] = requestID
        return fields
    }
}

/// swift-http-types' `HTTPField` (Hummingbird re-exports `HTTPFields` but not its element).
typealias HeaderField = HTTPFields.Element

extension HeaderField.Name {
    static let requestID: Self = Self("X-Request-Id")!
    static let partnerFrameworkStatus: Self = Self("AP-Partner-Framework-Status")!
    static let deviceIdentifier: Self = Self("AP-Device-Identifier")!
}
