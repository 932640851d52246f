extension GatewayError {
    /// A value of the refusal's context (``GatewayError/details``).
    public enum Detail: Sendable {
        case string(String)
        case integer(Int)
    }
}
