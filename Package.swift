// swift-tools-version: 6.1
import PackageDescription

/// `make sanitize` builds with `SAMLGATE_SANITIZE=1`: AddressSanitizer replaces `malloc` itself,
/// and jemalloc linked beside it makes the two free each other's memory.
let sanitizing = Context.environment["SAMLGATE_SANITIZE"] != nil

let package = Package(
    name: "samlgate",
    platforms: [.macOS(.v15)],
    // The program, and the two libraries a user would import (the cookbook encoding, the
    // verifier). Gateway, SAMLBatch and TestIdP are products only because the separate Benchmarks
    // and Fuzz packages can reach nothing else: what they use of Gateway and SAMLBatch is
    // `@_spi(Benchmarks)` (or `@_spi(Fuzzing)`). What the modules share among themselves is
    // `package` (public only where a public signature names it).
    products: [
        .executable(name: "samlgate", targets: ["samlgate"]),
        .library(name: "SAMLEncoding", targets: ["SAMLEncoding"]),
        .library(name: "SAMLVerification", targets: ["SAMLVerification"]),
        .library(name: "TestIdP", targets: ["TestIdP"]),
        .library(name: "Gateway", targets: ["Gateway"]),
        .library(name: "SAMLBatch", targets: ["SAMLBatch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        .target(
            name: "SAMLEncoding",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        // libxml2 + libxmlsec1 (OpenSSL backend): link lines and pkg-config search paths only.
        // SwiftPM drops pkg-config's -D flags, so the defines live in CXMLSec's own header.
        .systemLibrary(
            name: "CXMLSecSystem",
            path: "Sources/CXMLSec/System",
            pkgConfig: "xmlsec1-openssl",
            providers: [.apt(["libxmlsec1-dev", "libxml2-dev", "libssl-dev", "pkg-config"])]
        ),
        .target(name: "CXMLSec", dependencies: ["CXMLSecSystem"], path: "Sources/CXMLSec/Shim"),
        // Crypto and X509 read what a trust store shows of each key (fingerprint, certificate expiry).
        .target(
            name: "SAMLVerification",
            dependencies: [
                "CXMLSec",
                "SAMLEncoding",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // ByteBuffer: a verified document encodes itself into the caller's buffer.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The fixed set of threads for CPU-bound work, shared by the gateway and the batch tool, and
        // how many CPUs the process may use (the default size of its threads).
        .target(
            name: "Workers",
            dependencies: [
                "CThreadName", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // pthread_setname_np and sched_getaffinity, which Swift's Glibc module does not declare (they need _GNU_SOURCE).
        .target(name: "CThreadName"),
        // zlib, for gzip-compressed batch inputs.
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CJemalloc",
            path: "Sources/CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        .target(
            name: "SAMLBatch",
            dependencies: [
                "SAMLEncoding",
                "SAMLVerification",
                "Workers",
                "CZlib",
                "ServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "TestIdP",
            dependencies: [
                "CXMLSec",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The VSA framework's partner status (`AP-Partner-Framework-Status`) and its verdicts,
        // read alike by the gateway, the reference upstream and the demo; Foundation only.
        .target(name: "PartnerStatus"),
        // Small pieces shared by the servers and the CLI (JSON lines, published ports, the
        // enhanced error body, configuration errors).
        // Also the YAML configuration files' reader (anchors and aliases refused before Yams builds values).
        .target(
            name: "ServerSupport",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // A small Redis (RESP2) client on SwiftNIO: what the shared replay store needs and no more.
        .target(
            name: "RESP",
            dependencies: [
                "ServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "Gateway",
            dependencies: [
                "PartnerStatus",
                "ServerSupport",
                "RESP",
                "SAMLEncoding",
                "SAMLVerification",
                "Workers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Control plane only: fetching remote SAML metadata (MetadataRefreshService).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // Spans of the gateway's requests recorded as plain values and exported over OTLP/HTTP
        // (protobuf written directly), plugged into the Gateway's ``RequestTracing`` by
        // `samlgate serve`.
        .target(
            name: "GatewayTracing",
            dependencies: [
                "Gateway",
                "ServerSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "ReferenceUpstream",
            dependencies: [
                "PartnerStatus",
                "ServerSupport",
                "SAMLEncoding",
                "SAMLVerification",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "Demo",
            dependencies: [
                "Gateway", "PartnerStatus", "ReferenceUpstream", "ServerSupport", "TestIdP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "samlgate",
            dependencies: [
                "SAMLEncoding",
                "SAMLVerification",
                "TestIdP",
                "Gateway",
                "GatewayTracing",
                "ReferenceUpstream",
                "ServerSupport",
                "SAMLBatch",
                "Demo",
                "Workers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + (sanitizing ? [] : ["CJemalloc"]),
            swiftSettings: sanitizing ? [.define("SAMLGATE_NO_JEMALLOC")] : []
        ),
        // The library targets' tests build the library, not the program (no Hummingbird, no
        // AsyncHTTPClient); what runs the executable is in CLITests, SAMLBatchTests (the batch
        // tool through its command line), ServeTests (`samlgate serve` and `upstream` as
        // processes), ReferenceUpstreamTests (`samlgate upstream`) and GatewayTests (the trust
        // store as `serve`, `trust list` and `verify` read it).
        .testTarget(
            name: "SAMLEncodingTests",
            dependencies: ["SAMLEncoding", "CLITestSupport", "CookbookReference", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // RealIdP: genuine and forged responses from peer SAML libraries' test data (its
        // PROVENANCE.md); CZlib inflates the few stored DEFLATE-compressed, as their peers do.
        .testTarget(
            name: "SAMLVerificationTests",
            dependencies: [
                "SAMLVerification", "TestIdP", "CXMLSec", "SAMLEncoding", "CLITestSupport", "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("RealIdP")]
        ),
        // The command line's verbs that no module's tests cover: encode, verify, the demo, and
        // the YAML configuration files as `serve` and `upstream` read them.
        .testTarget(
            name: "CLITests",
            dependencies: ["samlgate", "CLITestSupport", "CookbookReference", "Gateway", "ServerSupport"]
        ),
        // The backend cookbook's own encoding code, verbatim: the tests' oracle.
        .target(name: "CookbookReference", path: "Sources/CookbookReference"),
        .testTarget(
            name: "SAMLBatchTests",
            dependencies: ["SAMLBatch", "TestIdP", "SAMLEncoding", "samlgate", "CLITestSupport", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // The gateway in this process, behind GatewayTestSupport's harness (a reference upstream
        // and a gateway on loopback ports), and the backend contract: the gateway and the
        // reference upstream asked the same and answering alike.
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "GatewayTestSupport", "ReferenceUpstream", "ServerSupport", "TestIdP", "SAMLEncoding", "SAMLVerification",
                "samlgate", "CLITestSupport", "RESP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The reference upstream's answers, asked directly (the harness's gateway in front of it
        // for the few cases that pass through), and `samlgate upstream`.
        .testTarget(
            name: "ReferenceUpstreamTests",
            dependencies: [
                "GatewayTestSupport", "CLITestSupport", "ServerSupport", "samlgate",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The demo's cookbook walks, step by step, against a reference upstream behind a gateway.
        .testTarget(name: "DemoTests", dependencies: ["Demo"]),
        // `samlgate serve` as a process: start-up, signals, draining, JSON log lines, secrets from files.
        .testTarget(
            name: "ServeTests",
            dependencies: [
                "GatewayTestSupport", "CLITestSupport", "TestIdP", "samlgate",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The small shared modules alone: build none of the servers.
        .testTarget(name: "PartnerStatusTests", dependencies: ["PartnerStatus"]),
        .testTarget(name: "ServerSupportTests", dependencies: ["ServerSupport"]),
        // The worker pool alone: builds none of the servers.
        .testTarget(name: "WorkersTests", dependencies: ["Workers"]),
        .testTarget(
            name: "RESPTests",
            dependencies: [
                "RESP", "CLITestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Runs the built executable for the CLI tests; used only by test targets.
        .target(
            name: "CLITestSupport",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Sources/CLITestSupport"),
        // The gateway tests' harness (a reference upstream and a gateway in this process, raw
        // HTTP connections, misbehaving upstreams, server processes); used only by test targets.
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "Gateway", "GatewayTracing", "ReferenceUpstream", "TestIdP", "SAMLEncoding", "ServerSupport", "CLITestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/GatewayTestSupport"),
    ]
)
