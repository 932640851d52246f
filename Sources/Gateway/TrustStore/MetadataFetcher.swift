import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SAMLEncoding
import SAMLVerification

/// One conditional GET of a metadata source, bounded in size and time. Control plane only: it
/// runs in ``MetadataRefreshService``, never on a request's path, on its own HTTP client.
///
/// Redirects are followed here rather than by the client (at most ``maxRedirects``), each
/// checked before it is followed:
/// - a redirect from `https://` to `http://` would hand the keys of an unsigned source to anyone
///   on the path; only a source allowed plain HTTP (it has a pinned signer) may be sent to one;
/// - a redirect is a request the gateway makes from its own network position on the source's
///   say-so: to a loopback, link-local (the cloud metadata service), private, unspecified or
///   reserved address (``NetworkAddressClass``) it is refused unless the configured URL's host
///   is in that class itself (a source on the same private network, a local test IdP). The
///   class is that of the addresses the redirect's host resolves to — all of them must be
///   allowed — and the hop connects to the address that was checked (the client's DNS override
///   for that host), so a name cannot resolve to a public address for the check and to
///   `127.0.0.1` for the connection.
struct MetadataFetcher: Sendable {
    let client: HTTPClient
    /// The group and configuration of a redirect's own client (pinned to the checked address).
    let eventLoopGroup: any EventLoopGroup
    let configuration: HTTPClient.Configuration
    /// Connect to last byte, redirects included.
    let timeout: TimeAmount

    static let maxRedirects = 3

    enum Outcome: Sendable {
        /// `304`: the cached copy is current.
        case notModified
        case fetched([UInt8], MetadataValidators)
    }

    /// One answer: the outcome, or where it redirects.
    private enum Step: Sendable {
        case done(Outcome)
        case redirect(URL)
    }

    /// The fetch, bounded as a whole by ``timeout``: the client's own deadline ends with the
    /// response head, so a source trickling its body a byte at a time would otherwise hold the
    /// refresh of every source for as long as it liked.
    func fetch(_ source: MetadataSource, validators: MetadataValidators) async throws(MetadataFetchFailure) -> Outcome {
        let timeout = self.timeout
        let result = await withTaskGroup(of: Result<Outcome, MetadataFetchFailure>?.self) { group in
            group.addTask {
                do throws(MetadataFetchFailure) {
                    return .success(try await self.fetchUnbounded(source, validators: validators))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let result else { throw MetadataFetchFailure(.timeout, "no complete answer in time") }
        return try result.get()
    }

    private func fetchUnbounded(_ source: MetadataSource, validators: MetadataValidators) async throws(MetadataFetchFailure) -> Outcome {
        let deadline = NIODeadline.now() + timeout
        var url = source.url
        let plainHTTPAllowed = source.url.scheme?.lowercased() == "http"
        // The classes a redirect may lead to, worked out at the first redirect.
        var allowed: Set<NetworkAddressClass>?
        // The checked address of a redirect's host name, connected to instead of resolving again.
        var pin: (host: String, address: String)?
        for _ in 0...Self.maxRedirects {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "Accept", value: "application/samlmetadata+xml, application/xml;q=0.9, */*;q=0.1")
            request.headers.add(name: "User-Agent", value: "samlgate-metadata")
            if let etag = MetadataValidators.usable(validators.etag) { request.headers.add(name: "If-None-Match", value: etag) }
            if let date = MetadataValidators.usable(validators.lastModified) { request.headers.add(name: "If-Modified-Since", value: date) }
            let step: Result<Step, MetadataFetchFailure>
            let hop = pin.map { pin in
                var configuration = self.configuration
                configuration.dnsOverride = [pin.host: pin.address]
                return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
            }
            do throws(MetadataFetchFailure) {
                step = .success(
                    try await exchange(request, on: hop ?? client, at: url, source: source, deadline: deadline, plainHTTPAllowed: plainHTTPAllowed))
            } catch {
                step = .failure(error)
            }
            try? await hop?.shutdown()
            switch try step.get() {
            case .done(let outcome):
                return outcome
            case .redirect(let next):
                let classes: Set<NetworkAddressClass>
                if let allowed {
                    classes = allowed
                } else {
                    classes = await Self.classes(of: source.url)
                    allowed = classes
                }
                pin = try await Self.check(next, allowed: classes)
                url = next
            }
        }
        throw MetadataFetchFailure(.httpStatus, "more than \(Self.maxRedirects) redirects")
    }

    /// One request and its answer.
    private func exchange(
        _ request: HTTPClientRequest, on client: HTTPClient, at url: URL, source: MetadataSource, deadline: NIODeadline, plainHTTPAllowed: Bool
    ) async throws(MetadataFetchFailure) -> Step {
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: deadline)
        } catch {
            throw Self.failure(error)
        }
        switch response.status.code {
        case 200:
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > source.sizeLimit {
                throw MetadataFetchFailure(.tooLarge, "the source announces \(length) bytes; metadata is limited to \(source.sizeLimit)")
            }
            let body = try await Self.collect(response.body, limit: source.sizeLimit)
            let fresh = MetadataValidators(
                etag: MetadataValidators.usable(response.headers.first(name: "ETag")),
                lastModified: MetadataValidators.usable(response.headers.first(name: "Last-Modified")))
            return .done(.fetched(Array(buffer: body), fresh))
        case 304:
            return .done(.notModified)
        case 301, 302, 303, 307, 308:
            guard let location = response.headers.first(name: "Location"), let next = URL(string: location, relativeTo: url)?.absoluteURL,
                let scheme = next.scheme?.lowercased(), scheme == "https" || (scheme == "http" && plainHTTPAllowed), next.host != nil
            else {
                throw MetadataFetchFailure(.httpStatus, "HTTP \(response.status.code): a redirect to a location this source may not use")
            }
            return .redirect(next)
        default:
            throw MetadataFetchFailure(.httpStatus, "HTTP \(response.status.code)")
        }
    }

    /// The host of `url` as the HTTP client reads it (the key of its DNS override), without the
    /// brackets of an IPv6 literal.
    static func host(of url: URL) -> String? {
        guard let host = URL(string: url.absoluteString)?.host, !host.isEmpty else { return nil }
        return host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The classes a redirect of the source configured as `url` may lead to: public addresses,
    /// and the classes of the configured host's own addresses.
    static func classes(of url: URL) async -> Set<NetworkAddressClass> {
        var classes: Set<NetworkAddressClass> = [.public]
        if let host = host(of: url) {
            for address in await HostResolver.resolve(host) { classes.insert(address.addressClass) }
        }
        return classes
    }

    /// Checks the host a redirect leads to; the address to connect to when it is a name (an IP
    /// literal is connected to as it is).
    static func check(_ next: URL, allowed: Set<NetworkAddressClass>) async throws(MetadataFetchFailure) -> (host: String, address: String)? {
        guard let host = host(of: next) else {
            throw MetadataFetchFailure(.httpStatus, "a redirect to a location without a host")
        }
        let addresses = await HostResolver.resolve(host)
        guard let first = addresses.first else {
            if Task.isCancelled { throw MetadataFetchFailure(.timeout, "cancelled") }
            throw MetadataFetchFailure(.network, "a redirect to \(host), which does not resolve")
        }
        if let refused = addresses.first(where: { !allowed.contains($0.addressClass) }) {
            throw MetadataFetchFailure(
                .redirectRefused,
                "a redirect to \(host), a \(refused.addressClass.rawValue) address (\(refused.text)), from a source whose configured host is not one")
        }
        if (try? SocketAddress(ipAddress: host, port: 0)) != nil { return nil }
        return (host, first.text)
    }

    /// The body, up to `limit` bytes, read part by part with a look at cancellation between
    /// parts: when ``fetch(_:validators:)``'s timer wins, its task group waits for this task to
    /// end, and a source trickling its body must not hold it until the last byte (the client's
    /// read timeout bounds a source that stops sending altogether).
    private static func collect(_ body: HTTPClientResponse.Body, limit: Int) async throws(MetadataFetchFailure) -> ByteBuffer {
        var collected = ByteBuffer()
        do {
            for try await part in body {
                try Task.checkCancellation()
                guard collected.readableBytes + part.readableBytes <= limit else {
                    throw MetadataFetchFailure(.tooLarge, "the document exceeds the \(limit)-byte metadata limit")
                }
                var part = part
                collected.writeBuffer(&part)
            }
        } catch let failure as MetadataFetchFailure {
            throw failure
        } catch {
            throw Self.failure(error, limit: limit)
        }
        return collected
    }

    /// The failure for what the client threw.
    private static func failure(_ error: any Error, limit: Int? = nil) -> MetadataFetchFailure {
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return MetadataFetchFailure(.timeout, "no complete answer in time")
        }
        if error is NIOTooManyBytesError, let limit {
            return MetadataFetchFailure(.tooLarge, "the document exceeds the \(limit)-byte metadata limit")
        }
        if error is CancellationError { return MetadataFetchFailure(.timeout, "cancelled") }
        return MetadataFetchFailure(.network, "\(error)")
    }
}

// MARK: - Why a fetch failed

/// Why a metadata fetch left the last good copy in place: the `reason` label of
/// `samlgate_metadata_refresh_failures_total` and of the `metadata_fetch_failed` log line.
struct MetadataFetchFailure: Error, Sendable {
    enum Reason: String, Sendable, CaseIterable {
        /// No answer: connection refused or reset, DNS, TLS.
        case network
        /// No complete answer within `metadata-timeout`.
        case timeout
        /// An answer other than 200 or 304 (or a redirect that may not be followed).
        case httpStatus = "http_status"
        /// A redirect to a loopback, link-local, private, unspecified or reserved address when
        /// the configured URL's host is not one itself (``NetworkAddressClass``).
        case redirectRefused = "redirect_refused"
        /// The document is larger than a metadata file may be.
        case tooLarge = "too_large"
        /// The document would not load: malformed, unsigned or wrongly signed with a pinned
        /// signer, no signing key, a mapped entity missing, expired. The trust store's code says
        /// which.
        case invalid
        /// A signed document that loads, but older than the copy in use (``MetadataPublication``):
        /// a replayed copy from before a key rotation.
        case rollback
        /// The good copy could not be written to `metadata-cache`.
        case cache
    }

    let reason: Reason
    /// The trust store's code for ``Reason/invalid``; `metadata_fetch_failed` otherwise.
    let code: ErrorCode
    let message: String

    init(_ reason: Reason, _ message: String, code: ErrorCode = .metadataFetchFailed) {
        self.reason = reason
        self.code = code
        self.message = message
    }
}

// MARK: - Conditional requests

/// The validators of a cached copy (`ETag`, `Last-Modified`), sent back as `If-None-Match` and
/// `If-Modified-Since` so that an unchanged source answers `304` with no body.
///
/// Kept in a file beside the copy (`metadata.xml.validators`), so a restarted gateway asks
/// conditionally too, and only when the copy it describes exists.
struct MetadataValidators: Equatable, Sendable {
    var etag: String?
    var lastModified: String?

    static func path(for copy: String) -> String { copy + ".validators" }

    /// The validators stored for the copy at `copy`; empty when either file is missing.
    static func read(for copy: String) -> MetadataValidators {
        let fm = FileManager.default
        guard fm.fileExists(atPath: copy), let data = fm.contents(atPath: path(for: copy)),
            let text = String(data: data, encoding: .utf8)
        else { return MetadataValidators() }
        var validators = MetadataValidators()
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else { continue }
            switch line[..<colon].lowercased() {
            case "etag": validators.etag = value
            case "last-modified": validators.lastModified = value
            default: continue
            }
        }
        return validators
    }

    /// The file's text.
    var text: String {
        (etag.map { "ETag: \($0)\n" } ?? "") + (lastModified.map { "Last-Modified: \($0)\n" } ?? "")
    }

    /// A header value goes back to the source verbatim: one without control characters only.
    static func usable(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.count <= 1024,
            value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { return nil }
        return value
    }
}
