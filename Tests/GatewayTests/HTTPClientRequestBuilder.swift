import AsyncHTTPClient
import NIOCore

enum HTTPClientRequestBuilder {
    static func post(_ url: String, body: [UInt8]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }
}
