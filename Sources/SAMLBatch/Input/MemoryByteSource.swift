/// A ``ByteSource`` over bytes already in memory, handed out at most `window` bytes per read so
/// that readers meet the same buffer boundaries as with a file. Used by ``BatchReaderFuzzing``.
final class MemoryByteSource: ByteSource {
    private let bytes: UnsafeRawBufferPointer
    private let window: Int
    private(set) var consumedBytes = 0

    init(_ bytes: UnsafeRawBufferPointer, window: Int) {
        self.bytes = bytes
        self.window = max(window, 1)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
        let count = min(buffer.count, window, bytes.count - consumedBytes)
        guard count > 0, let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
        target.copyMemory(from: source + consumedBytes, byteCount: count)
        consumedBytes += count
        return count
    }
}
