/// Which of the backend's APIs a request belongs to, which decides the vocabulary of a refusal:
/// REST API v1 (`/api/v1/…`) has its own list of enhanced error codes and may answer in XML; every
/// other path (REST API v2, client registration, anything the gateway cannot place) is answered
/// with the v2 list, the backend's current one.
public enum BackendAPI: String, Sendable {
    case v1
    case v2

    /// The API of a request path: `/api/v1` and below is v1 (ASCII case ignored, as the gateway
    /// routes), everything else v2.
    public init(path: some StringProtocol) {
        let prefix = "/api/v1"
        let bytes = path.utf8
        guard bytes.count >= prefix.utf8.count,
            zip(bytes, prefix.utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
        else {
            self = .v2
            return
        }
        let next = bytes.dropFirst(prefix.utf8.count).first
        self = next == nil || next == UInt8(ascii: "/") || next == UInt8(ascii: "?") ? .v1 : .v2
    }
}
