import Tracing

/// A point in wall-clock time, for a span started or ended at a time the data plane measured
/// earlier (an exchange's stages are recorded once they are over).
struct EpochInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64

    static func < (lhs: EpochInstant, rhs: EpochInstant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }
}
