/// `--shard I/N`: this run takes the records whose index (in input order, from 0) is `I` mod
/// `N`, so N machines given the same inputs split them with no overlap and no gap.
@_spi(Benchmarks) public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public static let all = Shard(uncheckedIndex: 0, count: 1)

    private init(uncheckedIndex: Int, count: Int) {
        self.index = uncheckedIndex
        self.count = count
    }

    /// Parses `I/N` with `0 <= I < N`; `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0, index >= 0, index < count else {
            return nil
        }
        self.init(uncheckedIndex: index, count: count)
    }

    public func contains(_ recordIndex: Int) -> Bool { recordIndex % count == index }

    public var description: String { "\(index)/\(count)" }
}
