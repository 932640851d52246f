import Logging

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
