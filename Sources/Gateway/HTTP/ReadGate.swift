/// Holds back a channel's reads while the other side of a relay cannot keep up, and gives back
/// the one read that was asked for meanwhile. Both ends of a pass-through use it: the client
/// connection while the backend is not writable, the backend connection while the client is not.
struct ReadGate {
    private(set) var isPaused = false
    private var held = false

    /// For `read(context:)`: whether to pass the read on now; otherwise it is held.
    mutating func admits() -> Bool {
        if isPaused { held = true }
        return !isPaused
    }

    mutating func pause() {
        isPaused = true
    }

    /// Opens the gate; returns whether a held read must be issued now.
    mutating func open() -> Bool {
        guard isPaused else { return false }
        isPaused = false
        defer { held = false }
        return held
    }
}
