import FuzzSupport
@_spi(Benchmarks) import Gateway

/// Target `form-body`.
///
/// Invariant: `FormBody.parse` on any body returns fields or a refusal — no crash, no hang — and
/// accepted fields are well formed: at most `FormBody.maximumFields`, ranges inside the body,
/// each value inside its pair, pairs in order and not overlapping, the exchange's unique fields
/// (any spelling) at most once, no raw `;` in an accepted body; every value form-decodes into a
/// buffer of its own size or is refused.
@main
enum FormBodyTarget {
    static func main() {
        FuzzDriver.run { data, size in FormBodyTarget.testOne(data, size) }
    }

    static let unique: [String: String] = Dictionary(
        uniqueKeysWithValues: ["requestor", "deviceId", "mvpd", "deviceType", "SAMLResponse", "deviceUser", "appId"].map { ($0.lowercased(), $0) })
    /// `unique` as `FormBody.parse(_:unique:)` takes it: each name's lower-case bytes and the name.
    static let uniqueKeys: [(key: [UInt8], name: String)] = unique.map { (Array($0.key.utf8), $0.value) }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let body = FuzzDriver.input(data, size)
        guard let fields = try? FormBody.parse(body, unique: uniqueKeys) else { return 0 }
        if fields.count > FormBody.maximumFields { FuzzFailure.violated("more fields than the maximum") }
        if body.contains(UInt8(ascii: ";")) { FuzzFailure.violated("a body with a raw ; was accepted") }
        var previousEnd = 0
        var seen: Set<String> = []
        for field in fields {
            guard field.pair.lowerBound >= previousEnd, field.pair.upperBound <= size,
                field.value.lowerBound >= field.pair.lowerBound, field.value.upperBound <= field.pair.upperBound
            else {
                FuzzFailure.violated("field ranges out of order or outside the body")
            }
            previousEnd = field.pair.upperBound
            let key = field.name.lowercased()
            if unique[key] != nil, !seen.insert(key).inserted { FuzzFailure.violated("a unique field accepted twice") }
            let value = UnsafeRawBufferPointer(rebasing: body[field.value])
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(value.count, 1), alignment: 1)
            defer { scratch.deallocate() }
            if let count = try? FormBody.decode(value, into: scratch, field: field.name), count > value.count {
                FuzzFailure.violated("a decoded value is longer than its encoding")
            }
        }
        return 0
    }
}
