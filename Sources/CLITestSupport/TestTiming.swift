import Foundation

/// How much longer than usual a test waits before it calls something lost: 1, or the factor in
/// `SAMLGATE_TEST_TIME_SCALE`. `make sanitize` sets it: sanitizer builds run several times slower,
/// and with every suite in parallel a deadline that is generous for the ordinary build becomes the
/// failure. Only waits scale, never what a test asserts about the gateway's own timeouts.
package enum TestTiming {
    package static let scale: Double = ProcessInfo.processInfo.environment["SAMLGATE_TEST_TIME_SCALE"].flatMap(Double.init).map { max($0, 1) } ?? 1

    /// `seconds` stretched by ``scale``.
    package static func seconds(_ seconds: Double) -> Double { seconds * scale }
}
