/// A file system path as the bytes the kernel knows it by, with a printable spelling for output.
///
/// Linux file names are bytes, not text: a capture copied from another system can carry names
/// that are not UTF-8, or that hold a line break. A `String` made from such a name has U+FFFD
/// where the bytes were, so it names no file, and two different files can print the same. So
/// the bytes are kept for every system call, and only ``description`` (the spelling used in
/// output records, reports and file names derived from them) is text.
///
/// ``description`` is injective: bytes that are not UTF-8, control characters (C0, DEL, C1),
/// the line and paragraph separators, the bidirectional controls (which make a terminal show
/// text in another order) and the backslash itself are written `\xNN`, one escape per byte;
/// everything else is written as it is. Distinct paths never print the same, and nothing a path
/// holds can start a new line on a terminal or in a log.
public struct RawPath: Sendable, Hashable, CustomStringConvertible {
    /// The path's bytes, without a terminating NUL (a path cannot contain one).
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The path whose bytes are `text`'s UTF-8.
    public init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// `self` + `/` + `name` (no second `/` when `self` ends with one).
    public func appending(_ name: [UInt8]) -> RawPath {
        var joined = bytes
        if joined.last != UInt8(ascii: "/") { joined.append(UInt8(ascii: "/")) }
        joined += name
        return RawPath(bytes: joined)
    }

    /// The bytes after the last `/`.
    public var lastComponent: ArraySlice<UInt8> {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes[...] }
        return bytes[(slash + 1)...]
    }

    /// Calls `body` with the path as a NUL-terminated C string, for system calls.
    public func withCString<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    public var description: String { Self.printable(bytes[...]) }

    /// The injective spelling of any bytes (see ``RawPath``); plain printable ASCII, the usual
    /// case, is returned as it is without a second pass. Without `escapingBackslash` the
    /// spelling is not injective, but still safe to print: for messages, which are read,
    /// not parsed back.
    public static func printable(_ bytes: ArraySlice<UInt8>, escapingBackslash: Bool = true) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && ($0 != 0x5C || !escapingBackslash) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        func escape(_ run: ArraySlice<UInt8>) {
            for byte in run {
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        // The standard library's decoder tells well-formed sequences (RFC 3629) from the
        // maximal ill-formed subparts, each escaped byte by byte.
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var i = bytes.startIndex
        decoding: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let sequence = bytes[i..<(i + encoded.count)]
                let scalar = UTF8.decode(encoded).value
                if isEscaped(scalar), scalar != 0x5C || escapingBackslash {
                    escape(sequence)
                } else {
                    out += sequence
                }
                i += encoded.count
            case .error(let length):
                escape(bytes[i..<(i + length)])
                i += length
            case .emptyInput:
                break decoding
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// What ``DisplayText/isUnsafe(_:)`` escapes (controls, line separators, bidirectional
    /// controls), and the backslash.
    private static func isEscaped(_ scalar: UInt32) -> Bool {
        scalar == 0x5C || Unicode.Scalar(scalar).map(DisplayText.isUnsafe) == true
    }
}
