import Foundation
import SAMLBatch
import Testing

/// Every code the batch tool adds is documented where users look it up.
@Suite("batch error codes")
struct BatchErrorCodeTests {
    @Test("every batch code has a heading in docs/errors.md")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        for code in RecordError.Code.allCases {
            #expect(text.contains("\n### \(code.rawValue)\n"), "\(code.rawValue) is not documented")
        }
    }
}
