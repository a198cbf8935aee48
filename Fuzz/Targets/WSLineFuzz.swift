// The WebSocket message-to-line path, both ways. Properties:
//   - a client message becomes framer input that ends in \n, so its lines
//     never join the next message's; the framer then yields exactly the
//     lines of the message (or `tooLong`), none holding a \n;
//   - server output cut into messages gives one message per line, none
//     holding a \n, the same whether the output arrives whole or in chunks;
//     joined back with \n it is the output again.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWSLine(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let maxLine = 1 + Int(input.byte() % 64)
    let seed = UInt64(input.byte())
    let message = input.rest()

    let framed = WebSocketLines.framerInput(forMessage: message)
    require(framed.last == UInt8(ascii: "\n"), "message input ends a line", message.shown)
    var framer = LineFramer(maxLineBytes: maxLine)
    framer.append(framed)
    var frames = 0
    while let frame = framer.next() {
        frames += 1
        if case .line(let line) = frame {
            require(!line.contains(UInt8(ascii: "\n")) && line.count <= maxLine, "lines are lines", message.shown)
        }
    }
    require(framer.bufferedByteCount == 0, "nothing of a message is left over", message.shown)
    require(frames == framed.filter { $0 == UInt8(ascii: "\n") }.count, "one frame per line", message.shown)

    // The same bytes as server output (which always ends in \n).
    let output = framed
    var whole = WebSocketLines.OutputSplitter()
    let messages = whole.messages(from: output).map(Array.init)
    var random = SplitMix64(seed: seed)
    var chunked = WebSocketLines.OutputSplitter()
    var pieces: [[UInt8]] = []
    var i = 0
    while i < output.count {
        let end = min(output.count, i + 1 + Int(random.next() % 16))
        pieces += chunked.messages(from: Array(output[i..<end])).map(Array.init)
        i = end
    }
    require(pieces == messages, "output split the same in chunks", message.shown)
    require(messages.allSatisfy { !$0.contains(UInt8(ascii: "\n")) }, "messages hold no newline", message.shown)
    require(Array(messages.joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")] == output,
            "messages join back to the output", message.shown)
    return 0
}
