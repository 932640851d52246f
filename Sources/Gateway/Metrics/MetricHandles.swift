import Synchronization

/// Metric handles by their dimension values, made once. Creating a swift-metrics handle asks the
/// Prometheus registry (label and dimension strings joined and looked up under its lock); the
/// gateway records about eight metrics per exchange, so it keeps the handles instead.
final class MetricHandles<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex<[Key: Handle]>([:])
    private let make: @Sendable (Key) -> Handle

    init(_ make: @escaping @Sendable (Key) -> Handle) {
        self.make = make
    }

    subscript(key: Key) -> Handle {
        if let handle = handles.withLock({ $0[key] }) { return handle }
        let handle = make(key)
        return handles.withLock { handles in
            if let existing = handles[key] { return existing }
            handles[key] = handle
            return handle
        }
    }
}
