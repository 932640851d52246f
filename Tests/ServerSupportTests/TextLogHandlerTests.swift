import Foundation
import Logging
import Testing

@testable import ServerSupport

/// The text log format through a real `Logger` and `TextLogHandler` writing to a pipe: whatever
/// a message or a metadata value holds (a Redis error text with a line feed, a bidi override),
/// one event is one line.
@Suite("Text log lines")
struct TextLogHandlerTests {
    /// Logs one event through the handler and returns what it wrote.
    static func written(_ body: (Logger) -> Void) throws -> String {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let writer = fds[1]
        let logger = Logger(label: "samlgate.gateway") { TextLogHandler(label: $0, level: .info, descriptor: writer) }
        body(logger)
        close(writer)
        let reader = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        return String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test("a line feed, CR, C1 and bidi characters in a value are escaped: one event, one line")
    func controlsAreEscaped() throws {
        let text = try Self.written { logger in
            logger.error(
                "replay store\r\n2026-01-01T00:00:00.000Z notice samlgate.gateway: forged",
                metadata: ["error": "ERR bad\n2026-01-01T00:00:00.000Z info forged line \u{202E}\u{85}\u{2028}\u{7F}"])
        }
        #expect(text.hasSuffix("\n"))
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count == 2, "\(text)")
        #expect(!text.dropLast().unicodeScalars.contains { DisplayText.isUnsafe($0) })
        #expect(text.contains(#"error=ERR bad\n2026-01-01"#))
        #expect(text.contains(#"\u{202e}\u{85}\u{2028}\u{7f}"#))
        #expect(text.contains(" error samlgate.gateway: replay store\\r\\n2026"))
    }

    @Test("plain values print as they are; a backslash is doubled so the escape reads back")
    func plainValues() throws {
        let text = try Self.written { $0.info("listening", metadata: ["path": #"C:\x"#, "port": "8080"]) }
        #expect(text.hasSuffix(" info samlgate.gateway: listening path=C:\\\\x port=8080\n"))
    }

    @Test("JSON lines escape C1, DEL and bidi characters as \\u too")
    func jsonEscapes() throws {
        let quoted = JSONLine.quote("a\u{202E}b\u{85}c\u{7F}d\u{2069}é")
        #expect(quoted == #""a\u202eb\u0085c\u007fd\u2069é""#)
        let parsed = try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String
        #expect(parsed == "a\u{202E}b\u{85}c\u{7F}d\u{2069}é")
    }
}
