import Foundation
import Testing

/// The shape of the v2 exchange's success body, as the backend documents it: checked alike on the
/// reference upstream's answers and on the gateway's.
package enum AppleProfileShape {
    /// The documented 201 body of the v2 exchange: `profiles` with one `appleSSO` profile for `mvpd`.
    package static func expect(_ reply: GatewayHarness.Reply, mvpd: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let profiles = reply.json?["profiles"] as? [String: Any]
        #expect(profiles?.count == 1, "\(reply.body)", sourceLocation: sourceLocation)
        let profile = profiles?[mvpd] as? [String: Any] ?? [:]
        for key in ["notBefore", "notAfter"] {
            // A JSON number of digits (not a string, not a fraction), as in the documented sample.
            let number = try? Regex("\"\(key)\"\\s*:\\s*[0-9]+\\s*[,}]")
            #expect(number.map { reply.body.contains($0) } == true, "\(key) is an integer number: \(reply.body)", sourceLocation: sourceLocation)
        }
        let now = Date().timeIntervalSince1970 * 1000
        let notBefore = (profile["notBefore"] as? NSNumber)?.doubleValue ?? 0, notAfter = (profile["notAfter"] as? NSNumber)?.doubleValue ?? 0
        #expect(notBefore <= now + 1000 && notBefore > now - 60_000 && notAfter > now, "milliseconds since the epoch", sourceLocation: sourceLocation)
        #expect(profile["issuer"] as? String == "Apple", sourceLocation: sourceLocation)
        #expect(profile["type"] as? String == "appleSSO", sourceLocation: sourceLocation)
        let attributes = profile["attributes"] as? [String: [String: Any]] ?? [:]
        #expect(attributes["userID"] != nil, "the mandatory userID", sourceLocation: sourceLocation)
        for (name, attribute) in attributes {
            #expect(attribute["value"] is String && attribute["state"] is String, "\(name): {value, state}", sourceLocation: sourceLocation)
        }
    }
}
