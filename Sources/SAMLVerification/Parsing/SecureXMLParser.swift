import CXMLSec

/// Parses untrusted bytes with libxml2 in its safest configuration.
///
/// Options: `XML_PARSE_NONET` (no network), `NOERROR`/`NOWARNING` (no stderr output from
/// worker threads). Never `NOENT` (it *enables* entity substitution), `DTDLOAD`, `DTDATTR`,
/// `HUGE` or `NOBLANKS` (which would change what was signed). `xmlSecParseMemory` is not used:
/// its defaults turn on entity substitution, DTD loading and HUGE. `COMPACT` keeps short text
/// (a few bytes: the indentation between elements) inside its node instead of a separate
/// allocation; the tree reads the same.
///
/// Limits: size is checked by the caller before any work; a DOCTYPE is refused by
/// ``PrologScanner`` before parsing and again on the tree; attributes and namespace
/// declarations are counted by ``MarkupScanner`` before parsing; depth beyond libxml2's own limit
/// of 256 (active without `HUGE`) fails the parse and is reported as `too_deep`; smaller
/// configured limits are enforced by ``ResponseStructure``.
enum SecureXMLParser {
    /// `IGNORE_ENC` with the encoding argument "UTF-8": the bytes are always read as UTF-8,
    /// whatever the XML declaration claims. A declared UTF-7 or BOM-less UTF-16 document would
    /// otherwise be decoded into markup (a DOCTYPE, say) that the byte-level prolog scan never
    /// saw, and what we verify would not be the bytes the backend receives.
    static let options: Int32 = Int32(
        bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue | XML_PARSE_IGNORE_ENC.rawValue | XML_PARSE_COMPACT.rawValue)

    static func parse(
        _ bytes: UnsafeRawBufferPointer, limits: MarkupLimits, maxDepth: Int,
        context: VerificationThreadContext
    ) throws(VerificationError) -> ParsedDocument {
        try PrologScanner.rejectDoctype(bytes)
        try MarkupScanner.check(bytes, limits: limits, maxDepth: maxDepth)
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw VerificationError(.malformedXML, "empty document")
        }
        guard bytes.count < Int(Int32.max) else {
            throw VerificationError(.tooLarge, "document exceeds 2 GiB")
        }
        context.recycleParserIfNeeded()
        let parser = context.parser
        let doc = xmlCtxtReadMemory(parser, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, "UTF-8", options)
        guard let doc else {
            throw parseFailure(parser)
        }
        let parsed = ParsedDocument(doc)
        if doc.pointee.intSubset != nil || doc.pointee.extSubset != nil {
            throw VerificationError(.forbiddenDTD, "DOCTYPE declarations are not accepted")
        }
        // libxml2 reports an undeclared prefix (`<saml2:NameID>` with no `xmlns:saml2`) as a
        // recoverable namespace error and keeps the element, named `saml2:NameID`, in no
        // namespace: invisible to every namespace-aware check here, yet the `NameID` a
        // namespace-unaware reader (Java's default DOM, Go's encoding/xml) finds first.
        guard parser.pointee.nsWellFormed != 0 else {
            throw VerificationError(.malformedXML, "not namespace-well-formed XML (an undeclared prefix)")
        }
        return parsed
    }

    private static func parseFailure(_ parser: UnsafeMutablePointer<xmlParserCtxt>) -> VerificationError {
        guard let error = xmlCtxtGetLastError(parser) else {
            return VerificationError(.malformedXML, "not well-formed XML")
        }
        let code = error.pointee.code
        if code == Int32(XML_ERR_INTERNAL_ERROR.rawValue), let message = error.pointee.message,
            String(cString: message).hasPrefix("Excessive depth")
        {
            return VerificationError(.tooDeep, "elements nest deeper than 256 levels")
        }
        if code == Int32(XML_ERR_ENTITY_LOOP.rawValue) || code == Int32(XML_WAR_UNDECLARED_ENTITY.rawValue)
            || code == Int32(XML_ERR_UNDECLARED_ENTITY.rawValue)
        {
            return VerificationError(.forbiddenDTD, "entity references are not accepted")
        }
        return VerificationError(.malformedXML, "not well-formed XML (libxml2 error \(code) at line \(error.pointee.line))")
    }
}
