import CYaml
import Foundation

/// Reads the YAML files of `samlgate serve --config` and `samlgate upstream --config`, and
/// refuses what would make building their values expensive, before any value is built.
///
/// Yams expands an alias into a copy of its anchor's value while constructing Swift values
/// (and hashes whole nodes to check mapping keys), so nine lines of nested anchors become
/// billions of nodes: 18 s of CPU and 3.8 GB before an unknown key could be reported. No
/// setting needs sharing, so anchors and aliases are refused outright. The check walks the
/// events of libyaml (the parser Yams itself runs on), which report anchors and aliases as
/// YAML means them: an `&` or `*` inside a quoted string or a comment is text, not an anchor,
/// which a byte scan could not tell. The walk allocates nothing per node and also bounds the
/// nesting depth (Yams builds values recursively) and the file size. A refusal is a
/// ``ConfigurationError`` naming the file and, when known, the line.
package enum ConfigurationFile {
    /// A configuration is a few kilobytes; a larger file is a mistake or an attack.
    package static let maximumSize = 1 << 20
    /// Sequences and mappings nest at most this deep.
    package static let maximumDepth = 64

    /// The text of the file at `path`, checked with ``check(yaml:path:)``. At most
    /// ``maximumSize`` + 1 bytes are read, whatever the file is.
    package static func read(_ path: String) throws(ConfigurationError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ConfigurationError("cannot read configuration file \(path)") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        } catch {
            throw ConfigurationError("cannot read configuration file \(path)")
        }
        guard data.count <= maximumSize else {
            throw ConfigurationError("\(path): larger than \(maximumSize) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(path): not UTF-8 text")
        }
        try check(yaml: text, path: path)
        return text
    }

    /// Throws when `text` is larger than ``maximumSize``, is not YAML, uses an anchor (`&name`)
    /// or an alias (`*name`, including `<<: *name` merges), or nests deeper than ``maximumDepth``.
    package static func check(yaml text: String, path: String) throws(ConfigurationError) {
        let count = text.utf8.count
        guard count <= maximumSize else { throw ConfigurationError("\(path): larger than \(maximumSize) bytes") }
        // libyaml reads from this buffer until the parser is deleted.
        let input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(count, 1))
        defer { input.deallocate() }
        _ = input.initialize(from: text.utf8)
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw ConfigurationError("\(path): out of memory") }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, input.baseAddress, count)
        var depth = 0
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else {
                let problem = parser.problem.map { String(cString: $0) } ?? "syntax error"
                throw ConfigurationError("\(path): line \(parser.problem_mark.line + 1): not valid YAML (\(problem))")
            }
            defer { yaml_event_delete(&event) }
            let line = event.start_mark.line + 1
            var anchor: UnsafeMutablePointer<yaml_char_t>?
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return
            case YAML_ALIAS_EVENT:
                throw ConfigurationError("\(path): line \(line): YAML aliases (*name) are not accepted; write the value out")
            case YAML_SCALAR_EVENT:
                anchor = event.data.scalar.anchor
            case YAML_SEQUENCE_START_EVENT:
                anchor = event.data.sequence_start.anchor
                depth += 1
            case YAML_MAPPING_START_EVENT:
                anchor = event.data.mapping_start.anchor
                depth += 1
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                depth -= 1
            default:
                break
            }
            if anchor != nil {
                throw ConfigurationError("\(path): line \(line): YAML anchors (&name) are not accepted; write the value out")
            }
            if depth > maximumDepth {
                throw ConfigurationError("\(path): line \(line): nested deeper than \(maximumDepth) levels")
            }
        }
    }
}

// MARK: - Configuration errors

/// A setting that cannot be used: unknown key, bad value, unreadable file, a demo that cannot be
/// set up. The message names the setting and where it came from (file and key, environment
/// variable or flag). Shared by the gateway, the reference upstream and the demo, whose
/// configuration failures are all of this one kind.
package struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }

    /// Where a decoded configuration file went wrong (the key path; never the value, which may
    /// be a secret).
    package static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "wrong value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        @unknown default:
            return "unreadable"
        }
    }
}
