import NIOCore

/// Between TLS and the protocol's handlers: the small writes of one flush become one buffer, and
/// so one `SSL_write` and one TLS record. swift-nio-ssl seals every write it is given as a record
/// of its own, and the protocols write in pieces — an HTTP/1.1 answer is a head and a body, an
/// HTTP/2 answer a HEADERS frame and a DATA frame's header and payload, each a write — so a flush
/// of sixteen streams' answers would be some forty records, each sealed on its own and 22 bytes
/// of overhead on the wire, where nginx writes one (its `ssl_buffer_size`, 16 KiB).
///
/// Writes are copied together while they fit in one record's 16 KiB. One that does not fit
/// beside what is held sends that on first, and goes on uncopied itself when it is over half a
/// record (a record or more of its own anyway). A flush of a single write is not copied.
/// What is held goes on before a close of any kind, so that nothing written is reordered or
/// lost on the way to swift-nio-ssl, which handles unflushed writes at a close as before.
final class TLSRecordCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The largest payload of one TLS record.
    static let recordSize = 16_384
    /// An empty buffer with no memory of its own to keep.
    private static let released = ByteBuffer()

    /// The first write held, kept as it is: a flush of one write is passed on uncopied.
    private var first: ByteBuffer?
    /// The writes held once there are two or more, copied together into memory of their own,
    /// which is let go once passed on: an idle connection keeps neither the 16 KiB nor the
    /// plaintext of its last answers.
    private var joined = TLSRecordCoalescer.released
    private var isJoining = false
    /// The promises of the writes held: the first one's, the later ones cascaded from it.
    private var promise: EventLoopPromise<Void>?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var bytes) = unwrapOutboundIn(data) else {
            pass(context)
            context.write(data, promise: promise)
            return
        }
        if bytes.readableBytes == 0 && (isJoining || first != nil) {
            // An HTTP/1.1 answer's end of known length: nothing to write, only its promise.
            hold(promise)
            return
        }
        let held = isJoining ? joined.readableBytes : first?.readableBytes ?? 0
        if held + bytes.readableBytes > Self.recordSize {
            pass(context)
            if bytes.readableBytes > Self.recordSize / 2 {
                context.write(data, promise: promise)
                return
            }
        }
        if isJoining {
            joined.writeBuffer(&bytes)
        } else if var earlier = first {
            first = nil
            isJoining = true
            joined = context.channel.allocator.buffer(capacity: earlier.readableBytes + bytes.readableBytes)
            joined.writeBuffer(&earlier)
            joined.writeBuffer(&bytes)
        } else {
            first = bytes
        }
        hold(promise)
    }

    func flush(context: ChannelHandlerContext) {
        pass(context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        pass(context)
        context.close(mode: mode, promise: promise)
    }

    /// Removed only as the channel is torn down: what is held is not written any more.
    func handlerRemoved(context: ChannelHandlerContext) {
        first = nil
        isJoining = false
        joined = Self.released
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
    }

    private func hold(_ promise: EventLoopPromise<Void>?) {
        guard let promise else { return }
        if let held = self.promise {
            held.futureResult.cascade(to: promise)
        } else {
            self.promise = promise
        }
    }

    /// Passes on what is held, as one write. (A promise failed inside it — TLS's output already
    /// closed — may write again from its callback: nothing reaches the wire then, in any order.)
    private func pass(_ context: ChannelHandlerContext) {
        let promise = self.promise
        self.promise = nil
        if isJoining {
            isJoining = false
            let bytes = joined
            joined = Self.released
            context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: promise)
        } else if let first {
            self.first = nil
            context.write(wrapOutboundOut(.byteBuffer(first)), promise: promise)
        }
    }
}
