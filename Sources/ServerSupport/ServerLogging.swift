import Logging

/// Process-wide logging set-up for the server commands (swift-log allows one bootstrap).
package enum ServerLogging {
    package static func bootstrap(level: Logger.Level, format: String) {
        LoggingSystem.bootstrap { label in
            if format == "text" {
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            return JSONLogHandler(label: label, level: level)
        }
    }
}
