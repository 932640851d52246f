import Synchronization

/// Metric handles by their label values, made once. Making a handle asks the Prometheus registry
/// (the labels validated and looked up under its lock); the gateway records about eight metrics
/// per exchange, so it keeps the handles instead.
final class MetricHandles<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex<[Key: Handle]>([:])
    private let make: @Sendable (Key) -> Handle

    init(_ make: @escaping @Sendable (Key) -> Handle) {
        self.make = make
    }

    /// Makes the handles of `keys` now, so that their series exist (at 0) before the first event.
    func prepare(_ keys: some Sequence<Key>) {
        for key in keys { _ = self[key] }
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
