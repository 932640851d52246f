/// The keys of one JSON object as every parser reads them (after unescaping), to refuse an
/// object that repeats one.
///
/// Parsers disagree on a repeated key: Foundation keeps the first copy, Python, Go and
/// JavaScript the last. A record holding `"mvpd":"A"` and `"mvp\u0064":"B"` would be verified
/// with A's trust by a tool comparing raw bytes while everything reading its `meta` sees B. So
/// keys are compared as unescaped bytes, ASCII letters in any case (Go's `encoding/json` and
/// ASP.NET Core bind `mvpd` and `MVPD` alike), and a repeated key is a `duplicate_key` error
/// (the rule ``StrictJSON`` applies to the gateway's partner status, on the batch tool's own
/// scanner).
///
/// Cost stays linear: a record's few keys are compared directly; from the seventeenth on a hash
/// set takes over. The storage is kept between objects.
struct JSONKeySet {
    private var storage: [UInt8] = []
    private var ranges: [Range<Int>] = []
    private var hashed: Set<[UInt8]>?
    private static let directLimit = 16

    init() {}

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        hashed = nil
    }

    /// Adds the key whose string, quotes included, is `text[string]` and returns it unescaped
    /// (valid until the next call). `escaped`: whether the string holds a backslash.
    ///
    /// - Throws: `invalid_json` for a string that is not valid JSON (a lone surrogate escape,
    ///   say), `duplicate_key` when the object already has this key.
    @discardableResult
    mutating func insert(_ text: UnsafeRawBufferPointer, string: Range<Int>, escaped: Bool) throws(RecordError) -> ArraySlice<UInt8> {
        try JSONSyntax.validateString(text, string)
        let start = storage.count
        let content = (string.lowerBound + 1)..<(string.upperBound - 1)
        if escaped {
            storage.append(contentsOf: repeatElement(0, count: content.count))
            var result: Result<Int, RecordError> = .success(0)
            storage.withUnsafeMutableBytes { region in
                let tail = UnsafeMutableRawBufferPointer(rebasing: region[start...])
                result = Result { () throws(RecordError) in try JSONSyntax.unescape(text, content, into: tail) }
            }
            storage.removeSubrange((start + (try result.get()))...)
        } else {
            storage.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[content]))
        }
        let key = storage[start...]
        if hashed != nil {
            guard hashed!.insert(Self.folded(key)).inserted else { throw Self.duplicate(at: string.lowerBound) }
        } else {
            for range in ranges where storage[range].elementsEqual(key, by: { Self.fold($0) == Self.fold($1) }) {
                throw Self.duplicate(at: string.lowerBound)
            }
            if ranges.count == Self.directLimit {
                hashed = Set(ranges.map { Self.folded(storage[$0]) } + [Self.folded(key)])
            }
        }
        ranges.append(start..<storage.count)
        return key
    }

    private static func duplicate(at offset: Int) -> RecordError {
        RecordError(.duplicateKey, "an object repeats a key at byte \(offset) (also when one copy is spelled with escapes or in other case)")
    }

    /// A key byte as binders that ignore case compare it: ASCII letters lower-cased.
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func folded(_ key: ArraySlice<UInt8>) -> [UInt8] { key.map(fold) }
}
