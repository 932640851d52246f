import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Sends bytes as they are over one TCP connection and reads the answer until the server
/// closes it: for request targets and headers an HTTP client library would rewrite or refuse
/// (`#fragment`, `*`, backslashes, lower-case methods).
package enum RawHTTP {
    package struct Answer {
        package var status: Int
        package var head: String
        package var body: String

        /// The `code` of an error body.
        package var code: String? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["code"] as? String
        }

        /// samlgate's reason of a refusal: the first part of its `details`.
        package var reason: String? {
            GatewayHarness.Reply.reason(details: (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["details"] as? String)
        }
    }

    /// `method target HTTP/1.1` with `headers` and a `body`; reads one answer.
    package static func send(
        port: Int, method: String = "POST", target: String, headers: [(String, String)] = [], body: String = ""
    ) async throws -> Answer {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + body
        return try await send(port: port, raw: Array(request.utf8))
    }

    /// Sends `bytes` exactly and reads one answer.
    package static func send(port: Int, raw bytes: [UInt8]) async throws -> Answer {
        // Blocking socket calls run on a thread of their own: on Swift concurrency's small pool
        // they could starve the in-process gateway that has to answer them.
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try exchange(port: port, bytes) })
            }
        }
    }

    private static func exchange(port: Int, _ bytes: [UInt8]) throws -> Answer {
        let fd = try RawConnection.connectedSocket(port: port, readTimeout: 30)
        defer { close(fd) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            sent += n
        }
        // Until the answer is complete (its Content-Length, or the end of a chunked body), or the
        // server closes: the server may answer before reading the whole body, so closing first
        // could reset the connection under the unread answer.
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !complete(received) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received += chunk[..<n]
        }
        return answer(received)
    }

    package static func complete(_ received: [UInt8]) -> Bool {
        let text = String(decoding: received, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        let body = text[end.upperBound...]
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
            return body.utf8.count >= length
        }
        if head.contains("transfer-encoding: chunked") { return body.hasSuffix("0\r\n\r\n") }
        return false
    }

    package static func answer(_ received: [UInt8]) -> Answer {
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Answer(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
