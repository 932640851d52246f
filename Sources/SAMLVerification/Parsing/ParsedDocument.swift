import CXMLSec

/// Sole owner of one parsed libxml2 document; frees it when it goes out of scope.
///
/// Non-copyable so that the document cannot outlive its owner or be freed twice, and
/// deliberately not `Sendable`: a document belongs to one request on one thread.
struct ParsedDocument: ~Copyable {
    let doc: UnsafeMutablePointer<xmlDoc>

    init(_ doc: UnsafeMutablePointer<xmlDoc>) {
        self.doc = doc
    }

    deinit {
        xmlFreeDoc(doc)
    }

    /// The root element, if any.
    var root: UnsafeMutablePointer<xmlNode>? {
        xmlDocGetRootElement(doc)
    }
}
