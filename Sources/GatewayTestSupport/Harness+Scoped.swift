import Gateway
import Logging

/// Runs `body` with a fresh harness and always stops it.
package func withHarness(
    upstreamURL: String? = nil, gatewayLogger: Logger? = nil, configure: (inout GatewayConfiguration) -> Void = { _ in },
    _ body: (GatewayHarness) async throws -> Void
) async throws {
    let harness = try await GatewayHarness(upstreamURL: upstreamURL, gatewayLogger: gatewayLogger, configure: configure)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}
