import NIOCore
import NIOHTTP1
import ServerSupport

/// The HTTP/1.1 request encoder of every upstream connection, in place of NIOHTTP1's
/// `HTTPRequestEncoder` and `NIOHTTPRequestHeadersValidator`: it writes the head's fields as they
/// are, with no second look at them. Every field it is given has been read by the gateway already —
/// a client's fields passed llhttp on the way in (no control character can be in one) and went
/// through the header policy (``ProxyHeaders``); the fields the gateway adds are its own (an
/// address, a checked `Host`, a request id of printable characters, a trace context) — so NIO's
/// validation and framing passes over every byte of every field would only repeat that, on every
/// request. The framing is the caller's: `Content-Length`, or `Transfer-Encoding: chunked` (then
/// each body part is written as a chunk), decided by ``UpstreamRequestHead``.
///
/// An ``UpstreamTrip`` hands the endpoint's path prefix and `Host` with the head
/// (``endpoint(prefix:authority:)``), so the head it keeps for retries is never copied to add
/// them. It sits below NIOHTTP1's response decoder, which sees each request head go by and so
/// knows which answer belongs to a `HEAD`.
final class UpstreamRequestEncoder: ChannelOutboundHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = ByteBuffer

    private var prefix = ""
    private var authority: String?
    /// The request being written is framed by chunks.
    private var chunked = false

    /// The next head goes to the endpoint with this path prefix and `Host`.
    func endpoint(prefix: String, authority: String) {
        self.prefix = prefix
        self.authority = authority
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            context.write(wrapOutboundOut(encode(head, allocator: context.channel.allocator)), promise: promise)
        case .body(.byteBuffer(let part)):
            guard chunked else { return context.write(wrapOutboundOut(part), promise: promise) }
            // An empty chunk would end the body: nothing to write.
            guard part.readableBytes > 0 else {
                promise?.succeed()
                return
            }
            var size = context.channel.allocator.buffer(capacity: 18)
            size.writeString(String(part.readableBytes, radix: 16))
            size.writeStaticString("\r\n")
            context.write(wrapOutboundOut(size), promise: nil)
            context.write(wrapOutboundOut(part), promise: nil)
            context.write(wrapOutboundOut(ByteBuffer(staticString: "\r\n")), promise: promise)
        case .body(.fileRegion):
            promise?.fail(ChannelError.operationUnsupported)
        case .end:
            // The gateway sends no trailers.
            let last = chunked ? ByteBuffer(staticString: "0\r\n\r\n") : ByteBuffer()
            chunked = false
            context.write(wrapOutboundOut(last), promise: promise)
        }
    }

    /// `METHOD prefix+target HTTP/1.1`, `Host` (when an endpoint was given), the head's fields, the
    /// blank line: one buffer, sized before it is written.
    private func encode(_ head: HTTPRequestHead, allocator: ByteBufferAllocator) -> ByteBuffer {
        var size = head.method.rawValue.utf8.count + prefix.utf8.count + head.uri.utf8.count + 16
        if let authority { size += authority.utf8.count + 8 }
        chunked = false
        for (name, value) in head.headers {
            size += name.utf8.count + value.utf8.count + 4
            if !chunked, name.utf8.count == 17, HTTPFieldValue.equalsIgnoringCase(name, "transfer-encoding") {
                chunked = HTTPFieldValue.equalsIgnoringCase(value, "chunked")
            }
        }
        var out = allocator.buffer(capacity: size)
        out.writeString(head.method.rawValue)
        out.writeStaticString(" ")
        out.writeString(prefix)
        out.writeString(head.uri)
        out.writeStaticString(" HTTP/1.1\r\n")
        if let authority {
            out.writeStaticString("Host: ")
            out.writeString(authority)
            out.writeStaticString("\r\n")
        }
        for (name, value) in head.headers {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("\r\n")
        prefix = ""
        authority = nil
        return out
    }
}
