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

// MARK: - One connection driven byte by byte

/// One TCP connection driven byte by byte, for what a client library hides: pipelined requests,
/// a body sent in pieces or after an interim answer, half-close, and whether the server closed.
///
/// Each blocking socket call runs on a thread of its own (see ``RawHTTP``): on Swift
/// concurrency's small pool it could starve the in-process gateway that has to answer it.
package final class RawConnection: @unchecked Sendable {
    private let fd: Int32
    /// Bytes read past the last answer (the start of the next pipelined one).
    private var pending: [UInt8] = []

    /// - Parameter receiveBuffer: `SO_RCVBUF` before connecting (a client whose window fills at
    ///   once, for a server's answer that cannot be written while it does not read).
    package init(port: Int, readTimeout seconds: Int = 30, receiveBuffer: Int? = nil) throws {
        fd = try Self.connectedSocket(port: port, readTimeout: seconds, receiveBuffer: receiveBuffer)
    }

    /// A blocking TCP socket connected to `127.0.0.1:port`, reads timing out after `seconds`.
    package static func connectedSocket(port: Int, readTimeout seconds: Int, receiveBuffer: Int? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }

    deinit { close(fd) }

    package func write(_ text: String) async throws {
        try await Self.onThread { [self] in
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw POSIXError(.EPIPE) }
                sent += n
            }
        }
    }

    /// Whether the server has sent something not read yet (or closed), without waiting.
    package func hasIncoming() -> Bool {
        guard pending.isEmpty else { return true }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Half-closes: the server reads the end of the stream, the connection stays open for answers.
    package func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// The next complete answer (head and body), or `nil` when the server closed (or the read
    /// timed out) before one was complete. An interim `100 Continue` is an answer of its own.
    package func readAnswer() async throws -> RawHTTP.Answer? {
        try await Self.onThread { [self] in
            while true {
                if let length = Self.answerLength(pending) {
                    let answer = RawHTTP.answer(Array(pending[..<length]))
                    pending.removeFirst(length)
                    return answer
                }
                guard let chunk = readChunk() else { return nil }
                pending += chunk
            }
        }
    }

    /// Whether the server closes the connection (reads the end of the stream) within the read
    /// timeout, discarding anything else it sends.
    package func closedByServer() async throws -> Bool {
        try await Self.onThread { [self] in readUntilClose { _ in } }
    }

    /// Everything the server sends until it closes the connection, or `nil` when it is still
    /// open at the read timeout.
    package func bytesUntilClose() async throws -> [UInt8]? {
        try await Self.onThread { [self] in
            var received = pending
            return readUntilClose { received += $0 } ? received : nil
        }
    }

    /// Reads, handing each chunk to `take`, until the server closes the connection (`true`, a
    /// reset included) or the read times out (`false`).
    private func readUntilClose(_ take: (ArraySlice<UInt8>) -> Void) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return n == 0 || errno == ECONNRESET }
            take(chunk[..<n])
        }
    }

    private func readChunk() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? Array(chunk[..<n]) : nil
    }

    /// The length of the first complete answer in `bytes`: its head, and a body by
    /// `Content-Length` or chunked framing (an answer without either, other than 1xx/204/304,
    /// is not expected from the gateway).
    package static func answerLength(_ bytes: [UInt8]) -> Int? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.firstRange(of: separator)?.upperBound else { return nil }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        if (100..<200).contains(status) || status == 204 || status == 304 { return headEnd }
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
            return bytes.count - headEnd >= length ? headEnd + length : nil
        }
        if head.contains("transfer-encoding: chunked") {
            let terminator: [UInt8] = Array("0\r\n\r\n".utf8)
            return bytes[headEnd...].firstRange(of: terminator).map { $0.upperBound }
        }
        return nil
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
