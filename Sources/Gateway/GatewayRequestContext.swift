import Hummingbird
import NIOCore

/// Hummingbird's per-request context plus the peer address (for `X-Forwarded-For`).
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
