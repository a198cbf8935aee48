import CWslay

/// The server side of one WebSocket's framing (RFC 6455), done by wslay, with
/// no IO: bytes read from the socket go in through `receive`, bytes to write
/// come out of `takeOutput`. wslay unmasks, reassembles fragments, checks
/// UTF-8 in text and close frames, answers pings, refuses unmasked frames,
/// reserved bits, over-long or fragmented control frames and messages over
/// the size limit, each with the right close code.
///
/// wslay's context carries two fixed 4 KiB buffers (its event layer's and
/// its frame layer's), about 8.5 KiB in all, while an idle watcher needs
/// none of it: outgoing messages are framed by the shared
/// `WebSocketTextWriter`, not by the context. So the context lives only
/// while a connection is inside something: it is made when bytes arrive
/// (or a close must be queued) and freed again once every byte handed to
/// wslay belongs to a finished frame, no fragmented message is open, and
/// wslay holds nothing to write. A watcher that sits idle holds no context.
///
/// Must be used on one thread (the loop's); not Sendable.
public final class WebSocketFramer {
    /// What a batch of input produced, in order.
    public enum Event: Equatable {
        /// A complete text message (valid UTF-8, checked by wslay).
        case text([UInt8])
        /// A binary message: refused, the framer has queued close 1003.
        case binary
        /// The peer's close frame (code 0 when it gave none); the framer has
        /// answered it.
        case closeReceived(code: UInt16)
    }

    /// wslay's state; nil while the connection sits between messages.
    private var context: wslay_event_context_ptr?
    private var input: [UInt8] = []
    private var inputOffset = 0
    private var output: [UInt8] = []
    private var events: [Event] = []
    private let maxMessageBytes: Int
    private let textWriter: WebSocketTextWriter
    /// A close is queued or sent: no more messages go out.
    private var closing = false
    /// A frame announced more payload than a message may hold.
    private var oversized = false
    /// wslay may hold frames of its own (pongs, a close) not yet pumped
    /// into `output`: only `receive` and `close` can queue them.
    private var wslayMayHoldOutput = false
    /// Bytes handed to the current context (its frame layer may hold some
    /// it has not parsed yet: part of a header).
    private var bytesHandedToWslay = 0
    /// Bytes of the frames wslay has started, headers included: equal to
    /// `bytesHandedToWslay` when no frame is partly read.
    private var bytesOfStartedFrames = 0
    /// wslay started a frame and has not seen its last payload byte.
    private var frameOpen = false
    /// A text or binary message's last frame (FIN) has not come yet; its
    /// fragments so far are held in the context.
    private var dataMessageOpen = false

    /// - Parameters:
    ///   - maxMessageBytes: a larger message closes with 1009.
    ///   - textWriter: frames outgoing messages; one may serve many framers.
    public init(maxMessageBytes: Int, textWriter: WebSocketTextWriter) {
        self.maxMessageBytes = maxMessageBytes
        self.textWriter = textWriter
    }

    deinit {
        if let context { wslay_event_context_free(context) }
    }

    /// True while wslay's context is held: something is half-read, queued
    /// or closing. False for a connection idle between messages.
    public var holdsContext: Bool { context != nil }

    /// The context, made now if the connection was idle.
    private func liveContext() -> wslay_event_context_ptr? {
        if let context { return context }
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { _, buffer, length, _, user in
            WebSocketFramer.from(user).fill(buffer, length)
        }
        callbacks.send_callback = { _, data, length, _, user in
            WebSocketFramer.from(user).take(data, length)
        }
        callbacks.on_frame_recv_start_callback = { _, argument, user in
            guard let argument else { return }
            WebSocketFramer.from(user).frameStarts(argument.pointee)
        }
        callbacks.on_frame_recv_end_callback = { _, user in
            WebSocketFramer.from(user).frameOpen = false
        }
        callbacks.on_msg_recv_callback = { context, argument, user in
            guard let argument else { return }
            WebSocketFramer.from(user).received(argument.pointee, context)
        }
        // Unretained: the context is freed by this object (when idle, or in
        // deinit), so the pointer never outlives what it points to.
        let user = Unmanaged.passUnretained(self).toOpaque()
        var made: wslay_event_context_ptr?
        let status = wslay_event_context_server_init(&made, &callbacks, user)
        precondition(status == 0 && made != nil, "wslay could not allocate a context")
        wslay_event_config_set_max_recv_msg_length(made, UInt64(maxMessageBytes))
        context = made
        bytesHandedToWslay = 0
        bytesOfStartedFrames = 0
        return made
    }

    /// Frees the context when nothing in it is needed: the connection is
    /// open, every byte wslay took belongs to a finished frame, no
    /// fragmented message is being gathered, and nothing waits to be
    /// written. The next bytes start a fresh context at a frame's first byte,
    /// which is exactly where a fresh context expects to start.
    private func releaseContextIfIdle() {
        guard let context, takesMessages, !oversized, !wslayMayHoldOutput,
              !frameOpen, !dataMessageOpen, bytesHandedToWslay == bytesOfStartedFrames,
              inputOffset == input.count else { return }
        wslay_event_context_free(context)
        self.context = nil
        bytesHandedToWslay = 0
        bytesOfStartedFrames = 0
        // The read buffer goes too: an idle connection keeps no capacity.
        input = []
        inputOffset = 0
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> WebSocketFramer {
        Unmanaged<WebSocketFramer>.fromOpaque(user!).takeUnretainedValue()
    }

    // MARK: - Driving it

    /// Frames read from the socket; returns the messages they completed.
    /// Answers (pongs, close replies) are left in the output.
    public func receive(_ bytes: some Collection<UInt8>) -> [Event] {
        if inputOffset > 0 && inputOffset == input.count {
            input.removeAll(keepingCapacity: true)
            inputOffset = 0
        }
        input.append(contentsOf: bytes)
        let context = liveContext()
        if wslay_event_get_read_enabled(context) != 0 {
            if wslay_event_recv(context) != 0 {
                // A frame wslay's frame layer could not parse (a 64-bit
                // length with its top bit set, a control frame over 125
                // bytes, a fragmented one): a protocol error, said so.
                _ = wslay_event_queue_close(context, UInt16(WSLAY_CODE_PROTOCOL_ERROR.rawValue), nil, 0)
                wslay_event_shutdown_read(context)
            }
            if oversized && wslay_event_get_read_enabled(context) != 0 {
                _ = wslay_event_queue_close(context, UInt16(WSLAY_CODE_MESSAGE_TOO_BIG.rawValue), nil, 0)
                wslay_event_shutdown_read(context)
            }
        } else {
            // After a close, nothing more is read; the bytes are dropped.
            input.removeAll()
            inputOffset = 0
        }
        pump()
        takesMessages = !closing && wslay_event_get_read_enabled(context) != 0
        releaseContextIfIdle()
        defer { events.removeAll() }
        return events
    }

    /// Frames one text message (a line without its `\n`) into the output;
    /// once a close is on its way, messages are dropped.
    public func sendText(_ payload: ArraySlice<UInt8>) {
        // `takesMessages` is false once a close is queued or reading stopped.
        guard takesMessages else { return }
        textWriter.append(text: payload, to: &output)
    }

    /// Messages given to `sendText` now are framed (not dropped): no close
    /// is on its way. Kept as a field (it changes only in `receive` and
    /// `close`), so a room's turn asks no C function per watcher.
    public private(set) var takesMessages = true

    /// `takeOutput` would return something: frames written or held by wslay.
    public var hasOutput: Bool { !output.isEmpty || wslayMayHoldOutput }

    /// Queues the close frame; messages queued before it go first.
    public func close(code: UInt16, reason: String = "") {
        // Pongs wslay holds go out first; the lines framed so far (a BYE)
        // are already in the output, ahead of the close.
        pump()
        closing = true
        takesMessages = false
        let bytes = Array(reason.utf8.prefix(123))
        _ = wslay_event_queue_close(liveContext(), code, bytes, bytes.count)
        wslayMayHoldOutput = true
    }

    /// Bytes to write to the socket, framed, since the last call.
    public func takeOutput() -> [UInt8] {
        pump()
        // Handed over whole: keeping capacity here would copy, as the
        // caller now shares the buffer.
        let taken = output
        output = []
        return taken
    }

    /// A close frame has been sent (by us or in answer).
    public var closeSent: Bool {
        guard let context else { return false }  // an idle connection has sent nothing
        return wslay_event_get_close_sent(context) != 0
    }

    /// Both sides have closed, or reading and writing are over: the socket
    /// can go once the output is written.
    public var isFinished: Bool {
        guard let context else { return false }  // idle: open both ways
        return wslay_event_want_read(context) == 0 && wslay_event_want_write(context) == 0
    }

    // MARK: - wslay's callbacks

    private func pump() {
        if let context, wslay_event_want_write(context) != 0 {
            _ = wslay_event_send(context)
            wslayMayHoldOutput = wslay_event_want_write(context) != 0
        } else {
            wslayMayHoldOutput = false
        }
    }

    private func fill(_ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int) -> Int {
        let available = input.count - inputOffset
        guard available > 0, let buffer else {
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        }
        let count = min(length, available)
        bytesHandedToWslay += count
        input.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + inputOffset, count: count)
        }
        inputOffset += count
        return count
    }

    private func take(_ data: UnsafePointer<UInt8>?, _ length: Int) -> Int {
        guard let data else { return 0 }
        output.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        return length
    }

    /// wslay checks a message's size as its payload arrives; a frame that
    /// announces more than the limit is refused at its header instead, so a
    /// client cannot hold the connection open trickling a huge frame.
    ///
    /// Also counts the frame's bytes, so `releaseContextIfIdle` knows when
    /// wslay has taken nothing past a finished frame. wslay refuses
    /// non-minimal length encodings and, on a server, unmasked frames before
    /// it calls this, so the header's size follows from the length: 2 bytes,
    /// 2 or 8 more for a 16- or 64-bit length, and the 4-byte mask key.
    private func frameStarts(_ frame: wslay_event_on_frame_recv_start_arg) {
        let length = frame.payload_length
        if length > UInt64(maxMessageBytes) { oversized = true }
        let lengthBytes = length < 126 ? 0 : length <= 0xFFFF ? 2 : 8
        let header = 2 + lengthBytes + 4
        // Clamped: a frame this long is refused (oversized) and never released.
        bytesOfStartedFrames += header + Int(min(length, UInt64(Int.max / 2)))
        frameOpen = true
        if frame.opcode < 0x8 {
            // A data frame (text, binary, continuation): FIN ends its message.
            dataMessageOpen = frame.fin == 0
        }
    }

    private func received(_ message: wslay_event_on_msg_recv_arg, _ context: wslay_event_context_ptr?) {
        switch UInt32(message.opcode) {
        case WSLAY_TEXT_FRAME.rawValue:
            events.append(.text(Array(UnsafeBufferPointer(start: message.msg, count: message.msg_length))))
        case WSLAY_BINARY_FRAME.rawValue:
            closing = true
            _ = wslay_event_queue_close(context, UInt16(WSLAY_CODE_UNSUPPORTED_DATA.rawValue), nil, 0)
            events.append(.binary)
        case WSLAY_CONNECTION_CLOSE.rawValue:
            closing = true
            events.append(.closeReceived(code: message.status_code))
        default:
            break  // pings and pongs: wslay answers pings itself
        }
    }
}
