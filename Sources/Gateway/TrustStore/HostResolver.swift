import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Resolves a host name to its addresses with `getaddrinfo`, as the HTTP client does, so that a
/// redirect's host is classed (``NetworkAddressClass``) by what a connection would reach: a
/// name, and every numeric spelling glibc accepts (`127.1`, `0x7f000001`, `2130706433`).
///
/// `getaddrinfo` blocks, so it runs on a Dispatch thread, never on the cooperative pool; the
/// caller stops waiting when its task is cancelled (the fetch's deadline), and the lookup then
/// ends on its own in the background.
package enum HostResolver {
    package struct Address: Sendable, Hashable {
        /// 4 or 16 bytes, network order.
        package let bytes: [UInt8]
        /// The numeric form (`127.0.0.1`, `::1`), what the HTTP client is told to connect to.
        package let text: String

        package var addressClass: NetworkAddressClass { NetworkAddressClass.of(bytes) }
    }

    /// The addresses of `host` (brackets around an IPv6 literal allowed); empty when it does
    /// not resolve or the task was cancelled first.
    package static func resolve(_ host: String) async -> [Address] {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let wait = Wait()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Address], Never>) in
                guard wait.park(continuation) else {
                    continuation.resume(returning: [])
                    return
                }
                DispatchQueue.global().async {
                    let addresses = lookup(host)
                    wait.finish(addresses)
                }
            }
        } onCancel: {
            wait.finish([])
        }
    }

    /// The continuation, resumed exactly once: by the lookup or by cancellation.
    private final class Wait: Sendable {
        private enum State {
            case idle
            case parked(CheckedContinuation<[Address], Never>)
            case finished
        }
        private let state = Mutex(State.idle)

        /// Parks the continuation; `false` when the wait already ended (cancelled first).
        func park(_ continuation: CheckedContinuation<[Address], Never>) -> Bool {
            state.withLock { state in
                guard case .idle = state else { return false }
                state = .parked(continuation)
                return true
            }
        }

        func finish(_ addresses: [Address]) {
            let parked = state.withLock { state -> CheckedContinuation<[Address], Never>? in
                defer { state = .finished }
                if case .parked(let continuation) = state { return continuation }
                return nil
            }
            parked?.resume(returning: addresses)
        }
    }

    private static func lookup(_ host: String) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            guard let address = entry.pointee.ai_addr else { continue }
            var bytes: [UInt8]
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                bytes = withUnsafeBytes(of: &v4) { Array($0) }
            case AF_INET6:
                var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                bytes = withUnsafeBytes(of: &v6) { Array($0) }
            default:
                continue
            }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            guard inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, bytes, &text, socklen_t(text.count)) != nil else { continue }
            let found = Address(bytes: bytes, text: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            if !addresses.contains(found) { addresses.append(found) }
        }
        return addresses
    }
}
