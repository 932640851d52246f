// The floor of the gateway's architecture, for `make load-compare`, `make bench-compare` and
// `make tls-compare`: the least a reverse proxy on SwiftNIO does per request, measured beside
// nginx and the gateway.
//
//   NIOFloorProxy --port P --upstream-port U [--threads N] [--tls-certificate PEM --tls-key PEM
//                 [--h2-at-connection]]
//
// The same codecs, read buffers and event-loop count as the gateway's data plane, and nothing
// else: no routing, no header rewriting, no timeouts, no metrics; every request part is passed
// on as it is and every answer part comes back the same way. Plain, it speaks HTTP/1.1 (NIOHTTP1),
// each client connection with its own keep-alive connection to the upstream (opened at its first
// request, on the same event loop). With a certificate it speaks TLS (swift-nio-ssl) and, as ALPN
// chooses, HTTP/1.1 or HTTP/2 — swift-nio-http2 with a child channel per stream and its
// HTTP/2-to-HTTP/1 codec, each stream's request sent over a pooled upstream connection of its
// event loop (``FloorUpstreamPool``), as the gateway's streams are. `--h2-at-connection` handles
// the streams at the connection instead (``FloorConnectionStreams``: no child channel, no codec
// per stream), to measure that model before the gateway is built on it.
// Not a product: it trusts its client and its upstream, and is only ever started on loopback by
// the comparison scripts. What the gateway costs above it is the gateway's own work; what it costs
// above nginx is what NIO's pipeline, codecs, TLS and HTTP/2 cost.
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let port = argument("--port").flatMap(Int.init), let upstreamPort = argument("--upstream-port").flatMap(Int.init) else {
    print("usage: NIOFloorProxy --port P --upstream-port U [--threads N] [--tls-certificate PEM --tls-key PEM [--h2-at-connection]]")
    exit(2)
}
let threads = argument("--threads").flatMap(Int.init) ?? System.coreCount
let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)
let tls: NIOSSLContext? = try argument("--tls-certificate").map { certificate in
    var configuration = TLSConfiguration.makeServerConfiguration(
        certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
        privateKey: .privateKey(try NIOSSLPrivateKey(file: argument("--tls-key") ?? "", format: .pem)))
    configuration.applicationProtocols = ["h2", "http/1.1"]
    return try NIOSSLContext(configuration: configuration)
}
let pools = FloorUpstreamPools(group: group, upstream: upstream)
let streamsAtConnection = CommandLine.arguments.contains("--h2-at-connection")

/// HTTP/1.1 on `channel`: one upstream connection of its own.
@Sendable func http1(_ channel: any Channel) throws {
    let pipeline = channel.pipeline.syncOperations
    try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
    try pipeline.addHandler(FloorClientHandler(upstream: upstream))
}

let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16_384, maximum: 65_536))
    .childChannelInitializer { channel in
        guard let tls else { return channel.eventLoop.makeCompletedFuture { try http1(channel) } }
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let pool = pools.pool(on: channel.eventLoop)
        return channel.configureHTTP2SecureUpgrade(
            h2ChannelConfigurator: { connection in
                if streamsAtConnection {
                    return connection.eventLoop.makeCompletedFuture {
                        try connection.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server))
                        try connection.pipeline.syncOperations.addHandler(FloorConnectionStreams(pool: pool.value))
                    }
                }
                return connection.configureHTTP2Pipeline(mode: .server) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                        try stream.pipeline.syncOperations.addHandler(FloorStreamHandler(pool: pool.value))
                    }
                }.map { _ in }
            },
            http1ChannelConfigurator: { connection in connection.eventLoop.makeCompletedFuture { try http1(connection) } })
    }
    .bind(host: "127.0.0.1", port: port)
    .wait()
print("NIOFloorProxy listening on \(channel.localAddress!) with \(threads) event loops\(tls == nil ? "" : ", TLS with h2 and http/1.1")")
try channel.closeFuture.wait()
