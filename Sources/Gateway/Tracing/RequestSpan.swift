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
    /// `01` when sampled, else `00`.
    var flags: String { get }
    /// Whether this span is exported: stage spans and attributes are only made then.
    var isRecording: Bool { get }

    /// A finished stage under this span, from `start` to `end` (`DispatchTime` nanoseconds).
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)])

    /// An attribute of the request's span. Never SAML content, a NameID, an attribute value or a device id.
    func setAttribute(_ key: String, _ value: String)

    /// Ends the span, named after the route (`POST v1_tokens_authn`), with the status answered
    /// (`0` when the client left before any answer); a 5xx marks it failed.
    func end(name: String, status: Int, at uptime: UInt64)
}
