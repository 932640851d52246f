/// Reads the `Subject/NameID` of a response *without verifying it*, for the reference upstream,
/// which stands behind a gateway that already did.
///
/// It reads the value from a parsed document exactly where the verifier does (see
/// ``ResponseStructure`` and ``ResponseFacts``): the `NameID` of the `Subject` of the one
/// `Assertion` that is a direct child of the root `Response`, as its full text content, so a
/// comment before the Assertion (`<!--<NameID>admin@victim.example<-->`) or one splitting the
/// value cannot choose the identity, as a text search would let it. Parsing is the verifier's
/// (markup limits, no network, no entities, no DOCTYPE, bytes read as UTF-8), on the calling
/// thread's parser context.
///
/// `package`: the result is unverified, so it is kept out of the public API.
package enum SubjectReader {
    /// The trimmed full text of the NameID; `nil` when the response has none. Throws when the
    /// bytes are not a response of the shape the verifier accepts.
    package static func nameID(
        _ bytes: UnsafeRawBufferPointer, options: VerificationOptions = VerificationOptions()
    ) throws(VerificationError) -> String? {
        let context = try VerificationThreadContext.current()
        let document = try SecureXMLParser.parse(bytes, limits: options.markupLimits, maxDepth: options.maxDepth, context: context)
        let structure = try ResponseStructure(document: document, maxDepth: options.maxDepth)
        return try ResponseFacts(structure: structure).nameID
    }
}
