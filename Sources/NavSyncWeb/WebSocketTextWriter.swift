import CWslay

/// Frames the daemon's text messages with wslay's frame layer, straight into
/// a connection's output buffer: no per-message queue entry, allocation or
/// copy, which the event layer's `wslay_event_queue_msg` costs. One writer
/// serves every connection of the daemon: a frame is written whole in one
/// call (the send callback always takes every byte), so the frame context
/// holds no state between calls, and one context spares each WebSocket the
/// few kilobytes of buffers a context carries.
///
/// Must be used on one thread (the loop's); not Sendable.
public final class WebSocketTextWriter {
    private var context: wslay_frame_context_ptr?
    /// Where the frame being written goes; set only during `append`.
    private var target: UnsafeMutablePointer<[UInt8]>?

    public init() {
        var callbacks = wslay_frame_callbacks()
        callbacks.send_callback = { data, length, _, user in
            let writer = Unmanaged<WebSocketTextWriter>.fromOpaque(user!).takeUnretainedValue()
            guard let data, let target = writer.target else { return -1 }
            target.pointee.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return length
        }
        // Server frames are not masked, so wslay never asks for a mask; the
        // callback is set because the frame layer expects one.
        callbacks.genmask_callback = { _, _, _ in 0 }
        // Unretained: the context lives inside this object and is freed in deinit.
        let status = wslay_frame_context_init(&context, &callbacks, Unmanaged.passUnretained(self).toOpaque())
        precondition(status == 0 && context != nil, "wslay could not allocate a frame context")
    }

    deinit {
        wslay_frame_context_free(context)
    }

    /// Every `\n`-ended line of `lines` as one text message without its
    /// `\n`, framed one after another: the bytes a connection's framer
    /// produces for the same lines, made once for a room's turn and shared
    /// by all its WebSocket watchers (server frames carry no mask, so they
    /// are the same for every connection). Bytes after the last `\n` are
    /// not framed; callers pass whole lines.
    public func frames(ofLines lines: UnsafeRawBufferPointer) -> [UInt8] {
        var output: [UInt8] = []
        // Each frame adds at most 10 bytes of header; a line is at least its `\n`.
        output.reserveCapacity(lines.count + lines.count / 4 + 16)
        let bytes = lines.assumingMemoryBound(to: UInt8.self)
        var start = 0
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            append(text: UnsafeBufferPointer(rebasing: bytes[start..<newline]), to: &output)
            start = newline + 1
        }
        return output
    }

    /// Appends one unmasked, unfragmented text frame holding `payload`.
    public func append(text payload: ArraySlice<UInt8>, to output: inout [UInt8]) {
        payload.withUnsafeBufferPointer { append(text: $0, to: &output) }
    }

    /// Appends one unmasked, unfragmented text frame holding `payload`.
    private func append(text buffer: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        withUnsafeMutablePointer(to: &output) { target in
            self.target = target
            defer { self.target = nil }
            var frame = wslay_frame_iocb(fin: 1, rsv: 0, opcode: UInt8(WSLAY_TEXT_FRAME.rawValue),
                                         payload_length: UInt64(buffer.count), mask: 0,
                                         data: buffer.baseAddress, data_length: buffer.count)
            // Cannot fail: the callback takes every byte, and an empty payload is a valid frame.
            _ = wslay_frame_send(context, &frame)
        }
    }
}
