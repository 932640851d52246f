/// The demo could not start (the walk itself reports failed steps in the transcript).
package struct DemoError: Error, Sendable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}
