import Hummingbird

/// Turns a ``Refusal`` thrown by any handler into its enhanced error answer, with the request's
/// trace id — so handlers check with `try` instead of each unwrapping a result.
struct RefusalMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as Refusal {
            return refusal.response(for: request)
        }
    }
}
