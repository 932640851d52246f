import SAMLEncoding
import SAMLVerification

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
