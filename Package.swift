// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "samlgate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "samlgate", targets: ["samlgate"]),
        .library(name: "SAMLEncoding", targets: ["SAMLEncoding"]),
        .library(name: "SAMLVerification", targets: ["SAMLVerification"]),
        .library(name: "TestIdP", targets: ["TestIdP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
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
        .target(name: "SAMLVerification", dependencies: ["CXMLSec", "SAMLEncoding"]),
        .target(
            name: "TestIdP",
            dependencies: [
                "CXMLSec",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "samlgate",
            dependencies: [
                "SAMLEncoding",
                "SAMLVerification",
                "TestIdP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SAMLEncodingTests",
            dependencies: ["SAMLEncoding", "samlgate", "CLITestSupport", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "SAMLVerificationTests",
            dependencies: ["SAMLVerification", "TestIdP", "CXMLSec", "SAMLEncoding", "samlgate", "CLITestSupport"]
        ),
        // Runs the built executable for the CLI tests; used only by test targets.
        .target(name: "CLITestSupport", path: "Sources/CLITestSupport"),
    ]
)
