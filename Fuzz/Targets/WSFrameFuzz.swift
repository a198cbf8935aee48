// The server side of WebSocket framing (wslay, through WebSocketFramer) fed
// whatever a peer may send. Properties:
//   - no input crashes it;
//   - it never answers with more than it was sent: pongs are no longer than
//     the (masked) pings they answer, a close reply is at most a status
//     code, so the output is bounded by the input plus one close frame —
//     the bound that keeps a ping flood from costing the daemon memory
//     beyond what the connection's output budget counts;
//   - no message longer than the limit is handed up;
//   - whole, byte at a time and in fuzzed chunks, the same text messages
//     come out, and when no run closed, the same bytes go back. (How and
//     when a connection ends may differ with the chunking, inside wslay: a
//     ping read in the same call as a bad frame is not answered before the
//     close, and a close frame's reason is checked as UTF-8 as its pieces
//     arrive, so a cut one may be refused early whole and not yet in bytes.
//     Either way it ends, and nothing after it is read.)
import NavSyncCore

/// A close frame the framer may add of its own (header and status code).
private let ownCloseFrameBytes = 4

private struct Run {
    var events: [WebSocketFramer.Event] = []
    var texts: [[UInt8]] {
        events.compactMap { if case .text(let message) = $0 { return message } else { return nil } }
    }
    var output: [UInt8] = []
    var closed = false
}

private func feed(_ bytes: [UInt8], maxMessage: Int, chunks: (Int) -> Int) -> Run {
    let framer = WebSocketFramer(maxMessageBytes: maxMessage, textWriter: WebSocketTextWriter())
    var run = Run()
    var i = 0
    var fed = 0
    while i < bytes.count {
        let end = min(bytes.count, i + chunks(i))
        run.events += framer.receive(bytes[i..<end])
        fed += end - i
        run.output += framer.takeOutput()
        require(run.output.count <= fed + ownCloseFrameBytes,
                "the framer answers with no more than it was sent", "\(run.output.count) out for \(fed) in")
        i = end
    }
    run.closed = framer.closeSent
    for case .text(let message) in run.events {
        require(message.count <= maxMessage, "no message over the limit is handed up", "\(message.count) > \(maxMessage)")
    }
    return run
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWSFrame(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let maxMessage = 1 + input.below(300)
    let seed = UInt64(input.byte())
    let bytes = input.rest()
    let whole = feed(bytes, maxMessage: maxMessage) { _ in bytes.count }
    let single = feed(bytes, maxMessage: maxMessage) { _ in 1 }
    var random = SplitMix64(seed: seed)
    let chunked = feed(bytes, maxMessage: maxMessage) { _ in 1 + Int(random.next() % 64) }
    for (name, run) in [("byte at a time", single), ("in chunks", chunked)] {
        require(run.texts == whole.texts, "\(name) gives the messages the whole input gives", "\(run) vs \(whole)")
        if !whole.closed && !run.closed {
            require(run.output == whole.output, "\(name) answers what the whole input answers", "\(run) vs \(whole)")
        }
    }
    return 0
}
