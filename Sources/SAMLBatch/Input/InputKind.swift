/// What one batch input holds, told from its name and first bytes (after gzip is undone).
enum InputKind: String, Sendable {
    /// One response: raw XML, base64, or the cookbook-encoded form. One record.
    case document
    /// JSON Lines: one object per line, the response in one field.
    case jsonLines
    /// An HTTP Archive: one record per request that carries a `SAMLResponse`.
    case har

    /// Decides from the file name (without `.gz`) first, then from the content: a `.har` name
    /// or an object whose first key is `log` is HAR; a `.jsonl`/`.ndjson` name or any other
    /// object is JSON Lines; everything else is a single document.
    static func detect(name: String, prefix: UnsafeRawBufferPointer) -> InputKind {
        let lowered = name.lowercased()
        let base = lowered.hasSuffix(".gz") ? String(lowered.dropLast(3)) : lowered
        if base.hasSuffix(".har") { return .har }
        if base.hasSuffix(".jsonl") || base.hasSuffix(".ndjson") { return .jsonLines }
        var i = 0
        JSONSyntax.skipWhitespace(prefix, &i)
        // A UTF-8 byte-order mark.
        if i + 2 < prefix.count, prefix[i] == 0xEF, prefix[i + 1] == 0xBB, prefix[i + 2] == 0xBF {
            i += 3
            JSONSyntax.skipWhitespace(prefix, &i)
        }
        guard i < prefix.count, prefix[i] == UInt8(ascii: "{") else { return .document }
        var key = i + 1
        JSONSyntax.skipWhitespace(prefix, &key)
        let log: [UInt8] = Array("\"log\"".utf8)
        if key + log.count <= prefix.count, Array(prefix[key..<(key + log.count)]) == log { return .har }
        return .jsonLines
    }

    static func isGzip(name: String, prefix: UnsafeRawBufferPointer) -> Bool {
        if prefix.count >= 2 { return prefix[0] == 0x1F && prefix[1] == 0x8B }
        return name.lowercased().hasSuffix(".gz")
    }
}
