import CXMLSec

/// Which trusted key signed a `SignedInfo`, found before xmlsec computes any reference digest.
///
/// xmlsec verifies the references first — canonicalizing and hashing the whole signed element —
/// and the signature value last, so with several trusted keys (a rotation, a metadata document
/// listing several) a response signed by anyone else cost one full pass per key, and a forged
/// response whose digests match (the forger signs it) cost all of them before `key_not_trusted`.
/// Here `SignedInfo` alone (a few hundred bytes) is canonicalized natively and its
/// `SignatureValue` checked against each key with xmlsec's own signature-method transform;
/// xmlsec then verifies everything with the one key that matched.
enum SignatureKeySelection: Equatable {
    /// This key signed `SignedInfo`.
    case key(Int)
    /// No trusted key signed `SignedInfo`.
    case none
    /// Not decided here (the native canonicalizer declined, an `InclusiveNamespaces` list on the
    /// `SignedInfo` canonicalization, an unreadable value): xmlsec tries the keys as before.
    case undecided

    /// The decoded `SignatureValue` is never longer than this (RSA-16384 or ECDSA P-521 are far below).
    private static let maximumSignatureBytes = 4096

    /// - Precondition: ``SignedInfoPrecheck`` passed on `signature`.
    static func select(signature: XMLTree.Node, keys: [TrustedKey], context: VerificationThreadContext) -> Self {
        guard let signedInfo = XMLTree.firstChildElement(signature),
            let valueNode = XMLTree.childElements(signature).first(where: { XMLTree.isElement($0, "SignatureValue", ns: SAMLNamespace.dsigNS) }),
            let method = XMLTree.childElements(signedInfo).first(where: { XMLTree.isElement($0, "CanonicalizationMethod", ns: SAMLNamespace.dsigNS) }
            ),
            XMLTree.firstChildElement(method) == nil,
            let signatureMethod = XMLTree.childElements(signedInfo).first(where: {
                XMLTree.isElement($0, "SignatureMethod", ns: SAMLNamespace.dsigNS)
            }),
            let algorithm = xmlGetNoNsProp(signatureMethod, "Algorithm")
        else { return .undecided }
        defer { cxmlsec_xml_free(algorithm) }
        let withComments = XMLTree.attribute(method, "Algorithm") == String(describing: AlgorithmPolicy.exclusiveC14NWithComments)
        guard let value = signatureValue(valueNode) else { return .undecided }
        guard let canonical = context.canonicalize(element: signedInfo, withComments: withComments) else { return .undecided }
        for (index, key) in keys.enumerated() {
            let matches = value.withUnsafeBufferPointer { signatureBytes in
                cxmlsec_signature_value_matches(
                    algorithm, key.key, canonical.baseAddress, UInt32(canonical.count), signatureBytes.baseAddress, UInt32(signatureBytes.count))
            }
            switch matches {
            case 1: return .key(index)
            case 0: continue
            default: return .undecided
            }
        }
        return .none
    }

    /// The base64 content of `SignatureValue`, decoded as xmlsec decodes it (whitespace skipped).
    private static func signatureValue(_ node: XMLTree.Node) -> [UInt8]? {
        guard let text = xmlNodeGetContent(node) else { return nil }
        defer { cxmlsec_xml_free(text) }
        guard Int(xmlStrlen(text)) <= maximumSignatureBytes * 2 else { return nil }
        var written: UInt32 = 0
        guard xmlSecBase64DecodeInPlace(text, &written) == 0, written > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(written)))
    }
}
