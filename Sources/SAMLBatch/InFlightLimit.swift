import Dispatch

/// How many chunks may be in flight at once — read and not yet written, whether queued, being
/// processed or finished and waiting for their turn in the output — so memory stays bounded
/// whatever the input's size. ``BatchRunner`` takes a slot for each chunk the reader hands on
/// and gives it back when the ordered writer has written that chunk.
final class InFlightLimit: Sendable {
    private let slots: DispatchSemaphore
    private let taken = DispatchGroup()

    init(_ limit: Int) {
        slots = DispatchSemaphore(value: limit)
    }

    /// Waits for a free slot and takes it for one chunk.
    func acquire() {
        slots.wait()
        taken.enter()
    }

    /// Gives back the slots of `count` chunks just written.
    func release(_ count: Int) {
        for _ in 0..<count {
            slots.signal()
            taken.leave()
        }
    }

    /// Waits until every slot taken was given back: every chunk read is written.
    func waitUntilAllReleased() {
        taken.wait()
    }
}
