#if canImport(Glibc)
import Glibc
#endif

/// One line of the audit trail: the decision on one token exchange, built on the event loop
/// from what the request gathered (plain values, nothing to compute) and turned into JSON on
/// the audit log's own queue (``line()``).
///
/// What it never holds: the NameID, attribute values, the SAML document, device ids. The user is
/// a keyed pseudonym (`subject`, see ``AuditKey``), the assertion a digest of its issuer and ID.
package struct AuditRecord: Sendable, Equatable {
    /// When the decision was answered: wall-clock seconds and nanoseconds since the Unix epoch.
    package var seconds: Int
    package var nanoseconds: Int
    package var requestID: String
    package var traceID: String
    /// The route label, as in `samlgate_requests_total` (`v1_tokens_authn`, `v2_profiles_sso`).
    package var route: String
    /// The trust store's MVPD, or `unknown` (as the metrics label it).
    package var mvpd: String
    /// Sent to the backend and its answer relayed; otherwise refused by the gateway.
    package var forwarded: Bool
    /// The HTTP status answered (0: the client went away before any answer).
    package var status: Int
    /// samlgate's error code of a refusal.
    package var reason: String?
    /// In report-only mode: the code enforcing would have refused with (the exchange was
    /// forwarded all the same).
    package var wouldRefuse: String?
    /// ``AuditDigest/assertion(_:)`` of a verified response.
    package var assertion: String?
    /// ``AuditKey/subject(of:)`` of a verified response's NameID, with a key configured.
    package var subject: String?
    /// The subject of the client's verified TLS certificate (`tls-client-auth`).
    package var clientCertificate: String?

    /// The current wall-clock time, for ``seconds`` and ``nanoseconds``.
    package static func now() -> (seconds: Int, nanoseconds: Int) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return (Int(time.tv_sec), Int(time.tv_nsec))
    }

    /// The JSON object and its line break: the bytes of one `write(2)`.
    package func line() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(384)
        out.append(contentsOf: #"{"time":""#.utf8)
        Self.appendTime(seconds: seconds, milliseconds: nanoseconds / 1_000_000, to: &out)
        out.append(UInt8(ascii: "\""))
        Self.append("request_id", requestID, to: &out)
        Self.append("trace_id", traceID, to: &out)
        Self.append("route", route, to: &out)
        Self.append("mvpd", mvpd, to: &out)
        Self.append("outcome", forwarded ? "forwarded" : "refused", to: &out)
        out.append(contentsOf: #","status":"#.utf8)
        out.append(contentsOf: String(status).utf8)
        if let reason { Self.append("reason", reason, to: &out) }
        if let wouldRefuse { Self.append("would_refuse", wouldRefuse, to: &out) }
        if let assertion { Self.append("assertion", assertion, to: &out) }
        if let subject { Self.append("subject", subject, to: &out) }
        if let clientCertificate { Self.append("client_certificate", clientCertificate, to: &out) }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    /// `,"name":"value"` with the value escaped as JSON requires (a request id comes from the client).
    private static func append(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: #",""#.utf8)
        out.append(contentsOf: name.utf8)
        out.append(contentsOf: #"":""#.utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20, 0x7F:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// ISO 8601 in UTC with milliseconds: `2026-11-26T13:09:34.123Z`.
    private static func appendTime(seconds: Int, milliseconds: Int, to out: inout [UInt8]) {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        out.append(UInt8(ascii: "."))
        digits(milliseconds, 3)
        out.append(UInt8(ascii: "Z"))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
