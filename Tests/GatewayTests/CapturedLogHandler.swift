import Logging

/// The handler behind ``CapturedLog``: every line at `trace` and above goes to the log.
struct CapturedLogHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        log.append(CapturedLog.Line(level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }))
    }
}
