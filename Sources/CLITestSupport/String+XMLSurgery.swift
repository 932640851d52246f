import Foundation

/// Text surgery on compact signed XML, for building attacks the way an attacker would (tests
/// of the verifier, the gateway and the batch tool).
extension String {
    /// The first substring from `start` through the matching `end` (inclusive), non-nested.
    package func element(_ start: String, _ end: String) -> String {
        guard let s = range(of: start), let e = range(of: end, range: s.upperBound..<endIndex) else {
            fatalError("element \(start) not found")
        }
        return String(self[s.lowerBound..<e.upperBound])
    }

    /// The first `saml:Assertion` element (assumes no nested Assertion).
    package var assertionElement: String { element("<saml:Assertion", "</saml:Assertion>") }

    /// The first `ds:Signature` element (assumes no nested Signature).
    package var signatureElement: String { element("<ds:Signature", "</ds:Signature>") }

    /// The whole `samlp:Response` element.
    package var responseElement: String { element("<samlp:Response", "</samlp:Response>") }

    package func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = range(of: target) else { fatalError("\(target) not found") }
        return replacingCharacters(in: r, with: replacement)
    }

    package func removingFirst(_ target: String) -> String { replacingFirst(target, with: "") }

    /// Value of the first `ID="…"` attribute after `marker`.
    package func id(after marker: String) -> String {
        let tail = self[range(of: marker)!.upperBound...]
        let start = tail.range(of: "ID=\"")!.upperBound
        let end = tail[start...].firstIndex(of: "\"")!
        return String(tail[start..<end])
    }

    package var responseID: String { id(after: "<samlp:Response") }
    package var assertionID: String { id(after: "<saml:Assertion") }
}
