/// Which of the backend's APIs a request belongs to, which decides the vocabulary of a refusal:
/// REST API v1 (`/api/v1/…`) has its own list of enhanced error codes and may answer in XML; every
/// other path (REST API v2, client registration, anything the gateway cannot place) is answered
/// with the v2 list, the backend's current one.
public enum BackendAPI: String, Sendable {
    case v1
    case v2

    /// The API of a request path: `/api/v1` and below is v1 (ASCII case ignored, as the gateway
    /// routes), everything else v2. Read on the path's bytes in place: it runs for every request
    /// the gateway routes.
    public init(path: some StringProtocol) {
        self = path.utf8.withContiguousStorageIfAvailable(Self.api(ofPath:)) ?? Self.api(ofPath: Array(path.utf8))
    }

    private static func api(ofPath bytes: UnsafeBufferPointer<UInt8>) -> BackendAPI {
        let prefix: StaticString = "/api/v1"
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return .v2 }
        for index in 0..<count where bytes[index] | 0x20 != prefix.utf8Start[index] | 0x20 {
            return .v2
        }
        guard bytes.count > count else { return .v1 }
        let next = bytes[count]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") ? .v1 : .v2
    }

    private static func api(ofPath bytes: [UInt8]) -> BackendAPI {
        bytes.withUnsafeBufferPointer(api(ofPath:))
    }
}
