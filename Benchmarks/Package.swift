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
    ]
)
