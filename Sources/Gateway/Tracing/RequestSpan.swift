/// The gateway's span of one request, used on the connection's event loop only. Its ids are
/// the ones the backend is told (``TraceContext``), so the backend's span hangs under it.
///
/// The stages of an exchange are recorded after the fact, each with the start and end the
/// data plane measured anyway: no span object crosses to a worker thread, and a request the
/// sampler left out (``isRecording`` false) costs no stage spans.
package protocol RequestSpan: AnyObject {
    /// 32 lower-case hex digits.
    var traceID: String { get }
    var spanID: UInt64 { get }
    /// The W3C trace flags: `01` when sampled, else `00`; plus `02` (Level 2's `random`) when the
    /// span started its trace with a trace id whose right-most 7 bytes at least are random. On a
    /// continued trace the `random` flag is the client's (``TraceContext``), whatever this says.
    var flags: String { get }
    /// Whether this span is exported: stage spans and attributes are only made then.
    var isRecording: Bool { get }

    /// A finished stage under this span, from `start` to `end` (`DispatchTime` nanoseconds).
    /// Attributes are typed as the OpenTelemetry semantic conventions type them: `integers` for
    /// those with a number for value (`http.response.status_code`), `attributes` for the strings.
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)], integers: [(String, Int)])

    /// An attribute of the request's span. Never SAML content, a NameID, an attribute value or a device id.
    func setAttribute(_ key: String, _ value: String)

    /// Ends the span, named after the route (`POST v1_tokens_authn`), with the status answered
    /// (`0` when the client left before any answer); a 5xx marks it failed.
    func end(name: String, status: Int, at uptime: UInt64)
}

extension RequestSpan {
    /// A finished stage with string attributes only.
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)]) {
        stage(name, from: start, to: end, attributes: attributes, integers: [])
    }
}
