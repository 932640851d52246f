import FuzzSupport
@_spi(Fuzzing) import Gateway

/// Target `request-target`.
///
/// Invariant: parsing any request target returns the canonical target or a refusal — no crash, no
/// hang — and the canonical target is a fixed point: it is printable ASCII without `#`, `\` or
/// `%25`, and parsing it again (origin-form and as a request line) accepts it and gives it back
/// unchanged. A target whose canonical form parsed differently would route one way and be read
/// another way behind the gateway.
@main
enum RequestTargetParsingTarget {
    static func main() {
        FuzzDriver.run { data, size in RequestTargetParsingTarget.testOne(data, size) }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = FuzzDriver.input(data, size).bindMemory(to: UInt8.self)
        var candidates: [String] = []
        if let target = RequestTargetFuzzing.forwarded(bytes) { candidates.append(target) }
        if let line = String(validating: bytes, as: UTF8.self), let (target, _) = RequestTargetFuzzing.forwarded(requestLine: line) {
            candidates.append(target)
        }
        for target in candidates {
            if !target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "\\") }) {
                FuzzFailure.violated("a canonical target holds a character it must not")
            }
            let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            if path.contains("%25") { FuzzFailure.violated("a canonical path holds %25") }
            let again = target.utf8.withContiguousStorageIfAvailable { RequestTargetFuzzing.forwarded($0) } ?? nil
            if again != target { FuzzFailure.violated("the canonical target does not parse to itself") }
            if RequestTargetFuzzing.forwarded(requestLine: target)?.target != target {
                FuzzFailure.violated("the canonical target read as a request line differs")
            }
        }
        return 0
    }
}
