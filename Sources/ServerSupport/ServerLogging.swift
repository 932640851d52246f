import Foundation
import Logging

/// Process-wide logging set-up for the server commands (swift-log allows one bootstrap).
package enum ServerLogging {
    package static func bootstrap(level: Logger.Level, format: String) {
        LoggingSystem.bootstrap { label in
            if format == "text" {
                return TextLogHandler(label: label, level: level)
            }
            return JSONLogHandler(label: label, level: level)
        }
    }
}

// MARK: - JSON lines

/// swift-log handler writing one JSON object per line to standard error:
/// `{"ts":…,"level":…,"label":…,"msg":…, metadata…}`. Messages and metadata are the caller's
/// responsibility: the gateway never puts SAML content, NameIDs or device ids in them.
package struct JSONLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    let label: String

    package init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        Self.write(Self.line(label: label, level: event.level, message: event.message.description, metadata: merged), to: 2)
    }

    /// One log line, without the newline: `ts`, `level`, `label`, `msg`, then the metadata in key
    /// order. Also what the server commands print themselves (start-up line, fatal errors) in
    /// the json format, so every line they write parses as the same kind of object.
    package static func line(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = JSONLine()
        line.add("ts", timestamp())
        line.add("level", level.rawValue)
        line.add("label", label)
        line.add("msg", message)
        for key in metadata.keys.sorted() {
            line.add(key, "\(metadata[key]!)")
        }
        return line.json
    }

    /// Writes `text` and a newline with one write(2), so lines from concurrent requests do not
    /// interleave.
    package static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array((text + "\n").utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
    }

    package static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}

// MARK: - Text lines

/// swift-log handler for `log-format: text`: one line per event on standard error,
/// `<ts> <level> <label>: <message> key=value …`, metadata in key order. Every message, key and
/// value goes through ``DisplayText/escape(_:)``, so text from outside (a Redis error, an
/// upstream's reason) cannot end the line and forge another one, or reorder it with bidi marks.
package struct TextLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    let label: String
    let descriptor: Int32

    /// `descriptor` is where lines go: standard error for the server, a pipe in tests.
    package init(label: String, level: Logger.Level, descriptor: Int32 = 2) {
        self.label = label
        self.logLevel = level
        self.descriptor = descriptor
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        JSONLogHandler.write(Self.line(label: label, level: event.level, message: event.message.description, metadata: merged), to: descriptor)
    }

    /// One log line, without the newline.
    package static func line(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = "\(JSONLogHandler.timestamp()) \(level.rawValue) \(DisplayText.escape(label)): \(DisplayText.escape(message))"
        for key in metadata.keys.sorted() {
            line += " " + DisplayText.escape(key) + "=" + DisplayText.escape("\(metadata[key]!)")
        }
        return line
    }
}
