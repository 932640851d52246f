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
