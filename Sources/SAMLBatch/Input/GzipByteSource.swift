import CZlib

/// Inflates a gzip stream (one or more concatenated members, as `cat a.gz b.gz` makes) from an
/// inner source, a window at a time: memory stays constant whatever the size.
///
/// The `z_stream` lives at a fixed address (zlib keeps a pointer back to it), so it is allocated
/// once here rather than stored inline in the object.
final class GzipByteSource: ByteSource {
    private let inner: any ByteSource
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    /// The current member ended; more input means another member follows.
    private var memberEnded = false
    private var finished = false
    /// `inflateInit2_` succeeded (deinit runs even when init throws).
    private var started = false

    var consumedBytes: Int { inner.consumedBytes }

    /// Starts inflating; `prefix` holds bytes already read from `inner` (the magic number sniffed
    /// by the caller).
    init(inner: any ByteSource, prefix: UnsafeRawBufferPointer) throws(RecordError) {
        self.inner = inner
        input = .allocate(byteCount: max(64 * 1024, prefix.count), alignment: 16)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        if let base = prefix.baseAddress, !prefix.isEmpty {
            input.baseAddress!.copyMemory(from: base, byteCount: prefix.count)
        }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(prefix.count)
        // 15 window bits + 16: gzip wrapper only.
        let status = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        started = status == Z_OK
        guard started else { throw RecordError(.corruptGzip, "zlib could not start (status \(status))") }
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    /// Consumes the rest of the input, which must be all zero bytes.
    private func skipZeroPadding() throws(RecordError) {
        while true {
            let available = UnsafeRawBufferPointer(start: stream.pointee.next_in, count: Int(stream.pointee.avail_in))
            if let offset = available.firstIndex(where: { $0 != 0 }) {
                let at = inner.consumedBytes - available.count + offset
                throw RecordError(
                    .trailingGzipData, "data after the last gzip member, from compressed byte \(at), is neither another member nor zero padding")
            }
            stream.pointee.avail_in = 0
            let n = try inner.read(into: input)
            if n == 0 { return }
            stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_in = uInt(n)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
        guard let out = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        while !finished {
            if stream.pointee.avail_in == 0 {
                let n = try inner.read(into: input)
                if n == 0 {
                    if memberEnded {
                        finished = true
                        return 0
                    }
                    throw RecordError(.truncatedGzip, "the gzip stream ends before its end marker")
                }
                stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(n)
            }
            if memberEnded {
                // Another member follows only if it starts with the magic number. Zero padding
                // (tape and block tools write it) carries nothing and is passed over; anything
                // else is reported, never dropped in silence.
                guard stream.pointee.next_in.pointee == 0x1F else {
                    try skipZeroPadding()
                    finished = true
                    return 0
                }
                inflateReset(stream)
                memberEnded = false
            }
            stream.pointee.next_out = out.assumingMemoryBound(to: Bytef.self)
            let window = min(buffer.count, Int(UInt32.max))
            stream.pointee.avail_out = uInt(window)
            let status = inflate(stream, Z_NO_FLUSH)
            let produced = window - Int(stream.pointee.avail_out)
            switch status {
            case Z_STREAM_END:
                memberEnded = true
            case Z_OK, Z_BUF_ERROR:
                break
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw RecordError(.corruptGzip, "the gzip stream is damaged: \(reason)")
            }
            if produced > 0 { return produced }
        }
        return 0
    }
}
