import Foundation
import NIOHTTP1

/// What a request head says about how its body and its answer are framed.
extension HTTPRequestHead {
    /// HTTP/1.0 (or older): no chunked bodies, no interim answers, no keep-alive unless asked.
    var predatesHTTP11: Bool {
        version.major < 1 || (version.major == 1 && version.minor == 0)
    }

    /// No transfer coding but `chunked`: the gateway forwards bodies chunked or by length, and a
    /// coding it dropped on the way (`gzip, chunked`) would reach the backend unannounced.
    var hasPlainFraming: Bool {
        let codings = headers["transfer-encoding"]
        return codings.isEmpty || (codings.count == 1 && codings[0].trimmingCharacters(in: .whitespaces).lowercased() == "chunked")
    }

    /// Whether the request announces a body (a chunked one, or a `Content-Length` above 0);
    /// read once per request, as ``InFlightRequest/hasBody``.
    var announcesBody: Bool {
        headers.contains(name: "transfer-encoding") || (headers.first(name: "content-length").flatMap(Int.init) ?? 0) > 0
    }

    /// The version of the answer: the client's own when it predates HTTP/1.1, else HTTP/1.1.
    var answerVersion: HTTPVersion { predatesHTTP11 ? version : .http1_1 }
}
