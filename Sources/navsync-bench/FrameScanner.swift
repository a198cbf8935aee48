/// The WebSocket side of the bench's parsing, as cheap as `LineScanner`:
/// skips the `101` response head, then reports, per text message from the
/// server (unmasked, unfragmented: navsyncd sends one frame per line), the
/// first two bytes of its payload, and skips the rest without looking.
struct FrameScanner {
    /// Bytes of `\r\n\r\n` matched so far while in the response head; 4 once past it.
    private var headMatched = 0
    /// Header bytes of the current frame collected so far.
    private var header: [UInt8] = []
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0
    private var first: UInt8 = 0
    private var second: UInt8 = 0
    private var seen = 0

    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onMessage: (UInt8, UInt8) -> Void) {
        var index = 0
        let count = bytes.count
        while index < count && headMatched < 4 {
            let byte = bytes[index]
            index += 1
            let expected: UInt8 = headMatched % 2 == 0 ? 13 : 10
            headMatched = byte == expected ? headMatched + 1 : (byte == 13 ? 1 : 0)
        }
        while index < count {
            if payloadLeft > 0 {
                if seen < 2 {
                    if seen == 0 { first = bytes[index] } else { second = bytes[index] }
                    seen += 1
                    payloadLeft -= 1
                    index += 1
                } else {
                    let skip = min(payloadLeft, count - index)
                    payloadLeft -= skip
                    index += skip
                }
                if payloadLeft == 0 { finish(onMessage) }
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count >= 2 else { continue }
            let short = Int(header[1] & 0x7F)
            let needed = short == 126 ? 4 : short == 127 ? 10 : 2
            guard header.count == needed else { continue }
            var length = short
            if short == 126 { length = Int(header[2]) << 8 | Int(header[3]) }
            if short == 127 { length = header[2...].reduce(0) { $0 << 8 | Int($1) } }
            header.removeAll(keepingCapacity: true)
            payloadLeft = length
            if length == 0 { finish(onMessage) }
        }
    }

    private mutating func finish(_ onMessage: (UInt8, UInt8) -> Void) {
        onMessage(first, second)
        first = 0
        second = 0
        seen = 0
    }
}
