import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SAMLVerification

/// One conditional GET of a metadata source, bounded in size and time. Control plane only: it
/// runs in ``MetadataRefreshService``, never on a request's path, on its own HTTP client.
///
/// Redirects are followed here rather than by the client (at most ``maxRedirects``) because a
/// redirect from `https://` to `http://` would hand the keys of an unsigned source to anyone on
/// the path; only a source allowed plain HTTP (it has a pinned signer) may be sent to one.
struct MetadataFetcher: Sendable {
    let client: HTTPClient
    /// Connect to last byte, redirects included.
    let timeout: TimeAmount

    static let maxRedirects = 3

    enum Outcome: Sendable {
        /// `304`: the cached copy is current.
        case notModified
        case fetched([UInt8], MetadataValidators)
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
        for _ in 0...Self.maxRedirects {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "Accept", value: "application/samlmetadata+xml, application/xml;q=0.9, */*;q=0.1")
            request.headers.add(name: "User-Agent", value: "samlgate-metadata")
            if let etag = MetadataValidators.usable(validators.etag) { request.headers.add(name: "If-None-Match", value: etag) }
            if let date = MetadataValidators.usable(validators.lastModified) { request.headers.add(name: "If-Modified-Since", value: date) }
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
                return .fetched(Array(buffer: body), fresh)
            case 304:
                return .notModified
            case 301, 302, 303, 307, 308:
                guard let location = response.headers.first(name: "Location"), let next = URL(string: location, relativeTo: url)?.absoluteURL,
                    let scheme = next.scheme?.lowercased(), scheme == "https" || (scheme == "http" && plainHTTPAllowed), next.host != nil
                else {
                    throw MetadataFetchFailure(.httpStatus, "HTTP \(response.status.code): a redirect to a location this source may not use")
                }
                url = next
            default:
                throw MetadataFetchFailure(.httpStatus, "HTTP \(response.status.code)")
            }
        }
        throw MetadataFetchFailure(.httpStatus, "more than \(Self.maxRedirects) redirects")
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
