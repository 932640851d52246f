/// Refuses JSON text that two parsers could read differently, before Foundation decodes it.
///
/// Foundation's decoders accept an object that repeats a key and keep the first copy; Python,
/// Go and JavaScript keep the last. A header the gateway reads one way and the backend another
/// (`frameworkProviderInfo` twice, each naming a different MVPD) lets a client be credited
/// with someone else's provider. So any object with a key twice is refused, at any depth, with
/// keys compared after unescaping (`"i\u0064"` is `"id"`) and ignoring ASCII case (`id` beside
/// `ID`: binders that ignore case read either), and a key outside ASCII is refused (binders fold
/// some such characters onto ASCII letters). Escapes that other parsers decode in
/// different ways are refused too: a lone surrogate (`\ud800`: kept by Python, U+FFFD in Go)
/// and bytes that are not UTF-8 (rejected by some, replaced by others).
///
/// Cost is linear: one pass, a hash set of keys per open object, size and depth bounded before
/// anything deep can build up.
package enum StrictJSON {
    /// The partner status is a few hundred bytes; anything far larger is not a client's.
    package static let maximumSize = 16 * 1024
    /// Objects and arrays nest at most this deep (the partner status uses three levels).
    package static let maximumDepth = 32

    /// Why the text was refused; never echoes the content.
    package struct Refusal: Error, Sendable, Equatable {
        package var reason: String
    }

    /// Throws unless `bytes` is one JSON value, UTF-8, within the bounds, with no object
    /// repeating a key.
    package static func check(_ bytes: [UInt8]) throws(Refusal) {
        guard bytes.count <= maximumSize else { throw Refusal(reason: "JSON larger than \(maximumSize) bytes") }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Refusal(reason: "JSON that is not UTF-8") }
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        try scanner.value(depth: 0)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw Scanner.malformed }
    }

    /// A recursive-descent walk over RFC 8259 JSON; recursion is bounded by ``maximumDepth``.
    struct Scanner {
        let bytes: [UInt8]
        /// Invariant: `bytes[..<index]` is a well-formed prefix of the value being read.
        var index = 0

        static let malformed = Refusal(reason: "not valid JSON")

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func value(depth: Int) throws(Refusal) {
            guard index < bytes.count else { throw Self.malformed }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string(keep: false)
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        mutating func object(depth: Int) throws(Refusal) {
            guard depth <= StrictJSON.maximumDepth else { throw Refusal(reason: "JSON nested deeper than \(StrictJSON.maximumDepth) levels") }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            var keys = Set<[UInt8]>()
            while true {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Self.malformed }
                guard keys.insert(try Self.bindingName(of: try string(keep: true))).inserted else {
                    throw Refusal(reason: "a JSON object repeats a key")
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                try value(depth: depth)
                skipWhitespace()
                guard index < bytes.count else { throw Self.malformed }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return
                }
                try expect(UInt8(ascii: ","))
                skipWhitespace()
            }
        }

        /// A key as the most lenient binder reads it, to compare with the object's other keys:
        /// ASCII letters folded (Go's `encoding/json` and ASP.NET Core bind keys ignoring case, so
        /// `id` beside `ID` names one field twice), and no character outside ASCII (Go folds
        /// `ſ` to `s` and the Kelvin sign to `k`, .NET upper-cases `ı` to `I`, and some binders
        /// normalize compatibility forms such as full-width letters: no key of a status needs any).
        static func bindingName(of key: [UInt8]) throws(Refusal) -> [UInt8] {
            var folded = key
            for index in folded.indices {
                let byte = folded[index]
                guard byte < 0x80 else { throw Refusal(reason: "a JSON key holds a character outside ASCII") }
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { folded[index] = byte | 0x20 }
            }
            return folded
        }

        mutating func array(depth: Int) throws(Refusal) {
            guard depth <= StrictJSON.maximumDepth else { throw Refusal(reason: "JSON nested deeper than \(StrictJSON.maximumDepth) levels") }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try value(depth: depth)
                skipWhitespace()
                guard index < bytes.count else { throw Self.malformed }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return
                }
                try expect(UInt8(ascii: ","))
                skipWhitespace()
            }
        }

        /// Reads the string whose opening quote is at `index`; returns its unescaped UTF-8 when
        /// `keep` (object keys), otherwise an empty array.
        mutating func string(keep: Bool) throws(Refusal) -> [UInt8] {
            var out: [UInt8] = []
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return out
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw Self.malformed }
                    let escape = bytes[index]
                    index += 1
                    let decoded: UInt8
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded = escape
                    case UInt8(ascii: "b"): decoded = 0x08
                    case UInt8(ascii: "f"): decoded = 0x0C
                    case UInt8(ascii: "n"): decoded = 0x0A
                    case UInt8(ascii: "r"): decoded = 0x0D
                    case UInt8(ascii: "t"): decoded = 0x09
                    case UInt8(ascii: "u"):
                        let scalar = try unicodeEscape()
                        if keep { UTF8.encode(scalar) { out.append($0) } }
                        continue
                    default: throw Self.malformed
                    }
                    if keep { out.append(decoded) }
                case 0x00..<0x20:
                    throw Self.malformed
                default:
                    if keep { out.append(byte) }
                }
            }
            throw Self.malformed
        }

        /// After `\u`: four hex digits, and for a high surrogate the `\uDC00`–`\uDFFF` that
        /// must follow it. A lone surrogate is refused.
        mutating func unicodeEscape() throws(Refusal) -> Unicode.Scalar {
            let first = try hex4()
            switch first {
            case 0xD800..<0xDC00:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw Refusal(reason: "JSON with a lone surrogate escape")
                }
                index += 2
                let second = try hex4()
                guard (0xDC00..<0xE000).contains(second) else { throw Refusal(reason: "JSON with a lone surrogate escape") }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
            case 0xDC00..<0xE000:
                throw Refusal(reason: "JSON with a lone surrogate escape")
            default:
                return Unicode.Scalar(first)!
            }
        }

        mutating func hex4() throws(Refusal) -> UInt32 {
            guard index + 4 <= bytes.count else { throw Self.malformed }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Self.malformed
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() throws(Refusal) {
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                digits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed }
                digits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed }
                digits()
            }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func digits() {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }

        mutating func literal(_ word: StaticString) throws(Refusal) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw Self.malformed }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw Self.malformed }
            index += count
        }

        mutating func expect(_ byte: UInt8) throws(Refusal) {
            guard index < bytes.count, bytes[index] == byte else { throw Self.malformed }
            index += 1
        }
    }
}
