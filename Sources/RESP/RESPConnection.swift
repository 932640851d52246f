import NIOCore

/// One connection to Redis, pipelined: commands are written as they come, without waiting for
/// earlier replies, and Redis answers in order, so the oldest unanswered command owns the next
/// reply.
///
/// A command unanswered after the command timeout fails with ``RESPError/Kind/timeout`` and
/// takes the connection down with it (and every command behind it): a reply arriving later
/// could not be told apart from the next command's. One sweep timer per connection checks the
/// oldest command (every quarter of the timeout, while commands wait), rather than a timer per
/// command: a timeout fires between 1 and 1.25 times the setting after the command was sent.
///
/// Commands sent in the same event-loop tick go out in one write: the flush is deferred to the
/// end of the tick, so exchanges finishing together cost Redis and the gateway one syscall each
/// way instead of one per command.
///
/// Replies are decoded here (``RESPValueDecoder``) rather than by a handler in front: the decoder
/// must know which reply types the oldest unanswered command can have, to refuse any other on
/// its first byte. Used only on its event loop.
final class RESPConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        let promise: EventLoopPromise<RESPValue>
        let deadline: NIODeadline
        /// The command's name (its first argument), turned into text only for an error.
        let name: ByteBuffer
        let acceptsReply: (@Sendable (RESPValue) -> Bool)?
        let replyTypes: RESPReplyTypes
    }

    let eventLoop: any EventLoop
    private let commandTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var pending = CircularBuffer<Pending>(initialCapacity: 16)
    private var sweep: Scheduled<Void>?
    private var flushScheduled = false
    /// Bytes read and not yet part of a complete reply (the decoder consumed what it keeps).
    private var received = ByteBuffer()
    private var decoder = RESPValueDecoder()
    /// Set once the channel is going away: later commands fail at once.
    private var failure: RESPError?
    /// A subscribed connection's messages, which no command waits for; without it such a reply
    /// is a stream out of step, and closes the connection.
    var onPush: ((RESPValue) -> Void)?
    /// Told once when the connection is gone (closed by either side or failed).
    var onClose: (() -> Void)?

    init(eventLoop: any EventLoop, commandTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.commandTimeout = commandTimeout
    }

    var isActive: Bool { failure == nil && context?.channel.isActive == true }

    /// Commands written and not yet answered.
    var inFlight: Int { pending.count }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `command` and returns its reply. An error reply fails the future with the kind
    /// ``RESPError/init(replying:to:)`` gives it (the error's first word only: Redis may quote
    /// arguments); one of ``RESPError/Kind/unavailable`` also closes the connection.
    func send(_ command: RESPCommand) -> EventLoopFuture<RESPValue> {
        guard let context, failure == nil else {
            return eventLoop.makeFailedFuture(failure ?? RESPError(.closed, "connection closed"))
        }
        let promise = context.eventLoop.makePromise(of: RESPValue.self)
        pending.append(
            Pending(
                promise: promise, deadline: .now() + commandTimeout, name: command.arguments[0],
                acceptsReply: command.acceptsReply, replyTypes: command.replyTypes))
        armSweep()
        var buffer = context.channel.allocator.buffer(capacity: 64)
        command.write(into: &buffer)
        context.write(wrapOutboundOut(buffer), promise: nil)
        if !flushScheduled {
            flushScheduled = true
            context.eventLoop.assumeIsolated().execute { [weak self] in
                guard let self else { return }
                self.flushScheduled = false
                self.context?.flush()
            }
        }
        return promise.futureResult
    }

    /// Checks the oldest command's deadline soon, unless a check is already due.
    private func armSweep() {
        guard sweep == nil, commandTimeout > .zero, let context else { return }
        let interval = TimeAmount.nanoseconds(max(commandTimeout.nanoseconds / 4, 1_000_000))
        sweep = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [weak self] in
            guard let self else { return }
            self.sweep = nil
            guard let oldest = self.pending.first else { return }
            if oldest.deadline <= .now() {
                self.fail(RESPError(.timeout, "no reply within \(Self.milliseconds(self.commandTimeout)) ms"))
            } else {
                self.armSweep()
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if received.readableBytes == 0 {
            received = incoming
        } else {
            received.writeBuffer(&incoming)
        }
        while failure == nil, received.readableBytes > 0 {
            guard let head = pending.first else {
                if let onPush {
                    // A subscriber's message (an array): no command waits for it.
                    do {
                        guard let value = try decoder.next(from: &received, accepting: .array) else { break }
                        onPush(value)
                        continue
                    } catch {
                        fail(RESPError(.protocol, error.message, command: "SUBSCRIBE"))
                        return
                    }
                }
                // Nothing asked for this: the stream is out of step with the commands.
                fail(RESPError(.protocol, "a reply no command was waiting for"))
                return
            }
            do {
                guard let value = try decoder.next(from: &received, accepting: head.replyTypes) else { break }
                deliver(value)
            } catch {
                fail(RESPError(.protocol, error.message, command: String(buffer: head.name).uppercased()))
                return
            }
        }
        // Consumed bytes are dropped once they outnumber the unread ones: each byte is moved at
        // most a bounded number of times, however the reply is split.
        if received.readableBytes == 0 {
            received.clear()
        } else if received.readerIndex >= 4096, received.readerIndex >= received.readableBytes {
            received.discardReadBytes()
        }
    }

    /// Hands a complete reply to the oldest unanswered command.
    private func deliver(_ value: RESPValue) {
        guard let first = pending.popFirst() else { return }
        let name = String(buffer: first.name).uppercased()
        if case .error(let text) = value {
            let error = RESPError(replying: text, to: name)
            first.promise.fail(error)
            // A replica, a loading server, one that lost its primary or wants a password: this
            // connection will not serve the commands behind either. Closed, so that the next
            // command connects again (and resolves the host again: a failover's new primary).
            if error.kind == .unavailable { fail(error) }
        } else if let accepts = first.acceptsReply, !accepts(value) {
            // A reply this command cannot have: out of step, or not Redis. Nothing more on
            // this connection can be believed.
            let error = RESPError(.protocol, "a reply \(name) cannot have", command: name)
            first.promise.fail(error)
            fail(error)
        } else {
            first.promise.succeed(value)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail((error as? RESPError) ?? RESPError(.closed, "connection error: \(error)"))
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(RESPError(.closed, "connection closed"))
        context.fireChannelInactive()
    }

    /// Fails every unanswered command with `error` and closes the connection (once).
    func fail(_ error: RESPError) {
        if failure == nil { failure = error }
        sweep?.cancel()
        sweep = nil
        while let first = pending.popFirst() {
            first.promise.fail(error)
        }
        context?.close(promise: nil)
        if let onClose {
            self.onClose = nil
            onClose()
        }
    }

    /// Closes the connection; unanswered commands fail with `error`.
    func close(_ error: RESPError) {
        fail(error)
    }

    static func milliseconds(_ amount: TimeAmount) -> Int64 {
        amount.nanoseconds / 1_000_000
    }
}
