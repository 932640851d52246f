/// Counts for the summary and the progress line, merged chunk by chunk.
@_spi(Benchmarks) public struct BatchStatistics: Sendable, Equatable {
    public var records = 0
    /// Records whose value was brought to the cookbook form.
    public var encoded = 0
    /// Records with an error of any kind (unencodable, or not valid with `--verify`).
    public var failed = 0
    /// With `--verify`: records whose signature and SAML rules checked out.
    public var valid = 0
    /// Failed records by error code.
    public var failuresByCode: [String: Int] = [:]
    /// Bytes of the response values read (after JSON unescaping or form decoding).
    public var bytesIn = 0
    /// Bytes of cookbook-encoded values produced.
    public var bytesOut = 0

    public init() {}

    mutating func fail(_ code: String) {
        failed += 1
        failuresByCode[code, default: 0] += 1
    }

    mutating func merge(_ other: BatchStatistics) {
        records += other.records
        encoded += other.encoded
        failed += other.failed
        valid += other.valid
        bytesIn += other.bytesIn
        bytesOut += other.bytesOut
        for (code, count) in other.failuresByCode { failuresByCode[code, default: 0] += count }
    }
}
