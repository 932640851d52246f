import Foundation
import GatewayTestSupport

extension MetadataServer {
    /// Runs `body` with a metadata server serving the harness IdP's signed metadata and a trust
    /// store whose one MVPD fetches it (``RemoteMetadataTests/store(url:refresh:signer:)``):
    /// `body` gets the server, the store and the metadata cache. The server is always stopped and
    /// the directories removed.
    static func withServedStore(
        refresh: String = "0.2", _ body: (MetadataServer, _ store: String, _ cache: String) async throws -> Void
    ) async throws {
        let metadata = try await MetadataServer.start(document: RemoteMetadataTests.document([GatewayHarness.idpPair]))
        let directories: (store: String, cache: String)
        do {
            directories = try RemoteMetadataTests.store(url: metadata.url, refresh: refresh)
        } catch {
            await metadata.stop()
            throw error
        }
        defer {
            try? FileManager.default.removeItem(atPath: directories.store)
            try? FileManager.default.removeItem(atPath: directories.cache)
        }
        do {
            try await body(metadata, directories.store, directories.cache)
        } catch {
            await metadata.stop()
            throw error
        }
        await metadata.stop()
    }
}
