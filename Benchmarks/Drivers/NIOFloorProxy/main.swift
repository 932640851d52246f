// The floor of the gateway's architecture, for `make load-compare` and `make bench-compare`: the
// least an HTTP/1.1 reverse proxy on SwiftNIO and NIOHTTP1 does per request, measured beside
// nginx and the gateway.
//
//   NIOFloorProxy --port P --upstream-port U [--threads N]
//
// The same codecs, read buffers and event-loop count as the gateway's data plane, and nothing
// else: each client connection gets its own keep-alive connection to the upstream (opened at its
// first request, on the same event loop), every request part is passed on as it is (no routing,
// no header rewriting, no timeouts, no metrics), and every answer part comes back the same way.
// Not a product: it trusts its client and its upstream, and is only ever started on loopback by
// scripts/load-compare.sh. What the gateway costs above it is the gateway's own work; what it costs
// above nginx is what NIO's pipeline and HTTP codecs cost.
import NIOCore
import NIOHTTP1
import NIOPosix

func argument(_ name: String) -> Int? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return Int(arguments[index + 1])
}

guard let port = argument("--port"), let upstreamPort = argument("--upstream-port") else {
    print("usage: NIOFloorProxy --port P --upstream-port U [--threads N]")
    exit(2)
}
let threads = argument("--threads") ?? System.coreCount
let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16_384, maximum: 65_536))
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try pipeline.addHandler(FloorClientHandler(upstream: upstream))
        }
    }
    .bind(host: "127.0.0.1", port: port)
    .wait()
print("NIOFloorProxy listening on \(channel.localAddress!) with \(threads) event loops")
try channel.closeFuture.wait()
