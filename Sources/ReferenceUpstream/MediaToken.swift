import Foundation

/// The short media token: opaque to apps (they pass it to the media verifier), here a base64
/// of a small XML document naming resource, requestor, MVPD and expiry. Not signed — the
/// reference upstream is a stand-in, not a token issuer anyone should trust.
enum MediaToken {
    static func serialize(resource: String, requestor: String, mvpd: String, expires: Date) -> String {
        let xml =
            "<mediaToken><resource>\(ReferenceReply.escapeHTML(resource))</resource><requestor>\(ReferenceReply.escapeHTML(requestor))"
            + "</requestor><mvpd>\(ReferenceReply.escapeHTML(mvpd))</mvpd><expires>\(ReferenceReply.millis(expires))</expires></mediaToken>"
        return Data(xml.utf8).base64EncodedString()
    }
}
