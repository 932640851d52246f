import NIOCore
import NIOPosix
import NIOSSL

/// How a pool opens a connection to a backend: over the network in the gateway
/// (``NetworkUpstreamConnector``); the tests hand in a connector whose channels run on the same
/// embedded event loop as the client's, so a whole trip — retries and timeouts included — runs
/// without a socket and on virtual time.
///
/// The channel it opens carries ``UpstreamConnectionPool/addClientHandlers(_:tls:endpoint:)``
/// and an ``UpstreamConnection`` last, which it completes with (on `eventLoop`).
protocol UpstreamConnector: Sendable {
    func connect(
        to endpoint: UpstreamEndpoint, index: Int, tls: NIOSSLContext?, timeout: TimeAmount, on eventLoop: any EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void)
}

/// Connections over TCP (and TLS for an `https` endpoint).
struct NetworkUpstreamConnector: UpstreamConnector {
    init() {}

    func connect(
        to endpoint: UpstreamEndpoint, index: Int, tls: NIOSSLContext?, timeout: TimeAmount, on eventLoop: any EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.recvAllocator, value: GatewayHTTPServer.readBuffers)
            // One read per event (NIO's default is four): what a paused answer may still bring in
            // is one buffer, which an HTTP/2 connection's answer budget reserves before it reads
            // (``HTTP2AnswerBudget/readSize``). An API answer fits one read either way.
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try UpstreamConnection.install(on: channel.pipeline.syncOperations, tls: tls, endpoint: endpoint, index: index)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    do {
                        completion(.success(try channel.pipeline.syncOperations.handler(type: UpstreamConnection.self)))
                    } catch {
                        channel.close(promise: nil)
                        completion(.failure(.connecting(error)))
                    }
                case .failure(let error):
                    completion(.failure(.connecting(error)))
                }
            }
    }
}
