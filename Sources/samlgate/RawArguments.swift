import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// The command line's arguments as the bytes the kernel passed.
///
/// `CommandLine.arguments` (and so ArgumentParser) replaces bytes that are not UTF-8 with U+FFFD:
/// a file named with such bytes would name no file, and two such names could read the same. The
/// raw `argv` still has the bytes; this finds the one each parsed argument came from.
enum RawArguments {
    /// The paths the parsed `arguments` were spelled with, in order. An argument without U+FFFD
    /// is exact UTF-8 already; one with it is matched, in order, to the next raw argument that
    /// decodes to the same text (positional arguments keep their order in `argv`).
    static func paths(_ arguments: [String]) -> [RawPath] {
        guard arguments.contains(where: { $0.unicodeScalars.contains("\u{FFFD}") }) else { return arguments.map(RawPath.init) }
        let raw = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
        }
        var next = 0
        return arguments.map { argument in
            guard argument.unicodeScalars.contains("\u{FFFD}") else { return RawPath(argument) }
            while next < raw.count {
                var candidate = raw[next][...]
                next += 1
                // `--out=VALUE` spells an option and its value in one argument.
                if candidate.starts(with: Array("--".utf8)), let equals = candidate.firstIndex(of: UInt8(ascii: "=")) {
                    candidate = candidate[(equals + 1)...]
                }
                if String(decoding: candidate, as: UTF8.self) == argument { return RawPath(bytes: Array(candidate)) }
            }
            return RawPath(argument)
        }
    }
}
