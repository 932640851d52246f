// swift-tools-version: 6.1
import PackageDescription

/// samlgate's libFuzzer targets. A separate package, so `make test`, `swift build` of the root
/// package and CI never build them: `make fuzz` builds this package with
/// `-sanitize=fuzzer,address` into `Fuzz/.build` (see docs/robustness.md).
///
/// Each executable's `@main` runs libFuzzer's driver (`LLVMFuzzerRunDriver`) with its input callback.
let fuzzers: [(product: String, target: String, dependencies: [Target.Dependency])] = [
    ("canonicalization", "CanonicalizationFuzzer", [.product(name: "SAMLVerification", package: "samlgate")]),
    ("verifier", "VerifierFuzzer", [.product(name: "SAMLVerification", package: "samlgate")]),
    (
        "forwarded-document", "ForwardedDocumentFuzzer",
        [
            .product(name: "Gateway", package: "samlgate"), .product(name: "SAMLVerification", package: "samlgate"),
            .product(name: "SAMLEncoding", package: "samlgate"), .product(name: "NIOCore", package: "swift-nio"),
        ]
    ),
    (
        "encoding", "EncodingFuzzer",
        [
            .product(name: "SAMLEncoding", package: "samlgate"), .product(name: "NIOCore", package: "swift-nio"),
        ]
    ),
    ("batch-readers", "BatchReadersFuzzer", [.product(name: "SAMLBatch", package: "samlgate")]),
    ("partner-status", "PartnerStatusFuzzer", [.product(name: "Gateway", package: "samlgate")]),
    ("request-target", "RequestTargetFuzzer", [.product(name: "Gateway", package: "samlgate")]),
    ("form-body", "FormBodyFuzzer", [.product(name: "Gateway", package: "samlgate")]),
]

let package = Package(
    name: "samlgate-fuzz",
    platforms: [.macOS(.v15)],
    products: fuzzers.map { .executable(name: $0.product, targets: [$0.target]) },
    dependencies: [
        .package(name: "samlgate", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        // What the fuzzers share: the trusted test key, the fixed clock, the genuine identity.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer", .product(name: "SAMLVerification", package: "samlgate")]),
        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CLibFuzzer"),
    ] + fuzzers.map { .executableTarget(name: $0.target, dependencies: ["FuzzSupport"] + $0.dependencies) }
)
