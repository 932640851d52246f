// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "samlgate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "samlgate", targets: ["samlgate"]),
        .library(name: "SAMLEncoding", targets: ["SAMLEncoding"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "SAMLEncoding",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        .executableTarget(
            name: "samlgate",
            dependencies: [
                "SAMLEncoding",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SAMLEncodingTests",
            dependencies: ["SAMLEncoding", "samlgate", .product(name: "NIOCore", package: "swift-nio")]
        ),
    ]
)
