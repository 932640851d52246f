/// One `name=value` pair of an `application/x-www-form-urlencoded` body, as byte ranges into
/// the body (still encoded), so fields the gateway does not change are forwarded byte for byte.
@_spi(Benchmarks) public struct FormField: Sendable {
    /// The decoded name (names are short; values stay as ranges).
    public let name: String
    /// The whole `name=value` pair.
    public let pair: Range<Int>
    /// The encoded value.
    public let value: Range<Int>
}
