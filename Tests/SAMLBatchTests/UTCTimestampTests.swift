import Foundation
import Testing

@testable import SAMLBatch

@Suite("UTC timestamps")
struct UTCTimestampTests {
    @Test("the same text as Foundation's ISO 8601 style", arguments: [0.0, 1_700_000_000.9, 4_102_444_799, 951_782_400])
    func matchesFoundation(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(UTCTimestamp.string(date) == date.formatted(.iso8601))
    }
}
