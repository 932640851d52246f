// swift-tools-version: 6.1
// The benchmark package is separate from the product so that `make test` and users never build
// ordo-one/benchmark (as swift-nio does). Run with `make bench` from the repository root.
import PackageDescription

let package = Package(
    name: "samlgate-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "samlgate", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        .executableTarget(
            name: "Encoding",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SAMLEncoding", package: "samlgate"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/Encoding",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Verification",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SAMLVerification", package: "samlgate"),
                .product(name: "TestIdP", package: "samlgate"),
            ],
            path: "Benchmarks/Verification",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "GatewayExchange",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Gateway", package: "samlgate"),
                .product(name: "SAMLEncoding", package: "samlgate"),
                .product(name: "SAMLVerification", package: "samlgate"),
                .product(name: "TestIdP", package: "samlgate"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/GatewayExchange",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Batch",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SAMLBatch", package: "samlgate"),
                .product(name: "SAMLVerification", package: "samlgate"),
                .product(name: "TestIdP", package: "samlgate"),
            ],
            path: "Benchmarks/Batch",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Adversarial",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SAMLEncoding", package: "samlgate"),
                .product(name: "SAMLVerification", package: "samlgate"),
                .product(name: "TestIdP", package: "samlgate"),
            ],
            path: "Benchmarks/Adversarial",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // A plain driver for instruction counts under callgrind and for the side-by-side run
        // against python-xmlsec (scripts/verify-compare.sh). Not under Benchmarks/: the benchmark
        // plugin runs every executable target whose folder sits there as a benchmark.
        .executableTarget(
            name: "VerifyDriver",
            dependencies: [
                .product(name: "SAMLVerification", package: "samlgate"),
                .product(name: "TestIdP", package: "samlgate"),
            ],
            path: "Drivers/VerifyDriver"
        ),
        // The floor of a reverse proxy on SwiftNIO and NIOHTTP1 (`make load-compare`, `make bench-compare`): the
        // gateway's codecs and nothing else, measured beside nginx and the gateway.
        .executableTarget(
            name: "NIOFloorProxy",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Drivers/NIOFloorProxy"
        ),
    ]
)
