/// ``RequestTarget`` parsing for the `request-target` fuzz target (`Fuzz/`,
/// docs/robustness.md). Not used by the data plane.
///
/// **Why it is here.** ``RequestTarget`` is internal to the gateway; the fuzz package sees only
/// public API. These functions call exactly the parsers the connection handler calls and return
/// the target it would forward, or `nil` when it would answer `invalid_request_target`.
@_spi(Fuzzing) public enum RequestTargetFuzzing {
    /// The forwarded target for the raw target bytes of a request line (origin-form parser).
    public static func forwarded(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        try? RequestTarget.parse(bytes).forwarded
    }

    /// The forwarded target and the authority for a request line's target (origin- or absolute-form).
    public static func forwarded(requestLine uri: String) -> (target: String, authority: String?)? {
        guard let (target, authority) = try? RequestTarget.parse(requestLine: uri) else { return nil }
        return (target.forwarded, authority)
    }
}
