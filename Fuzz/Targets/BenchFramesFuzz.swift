// navsync-bench's WebSocket reader (Sources/navsync-bench/FrameScanner.swift),
// which counts what navsync-ws and navsync-wss watchers receive; inside TLS
// its input is cut wherever the records were. A 101 head and the fuzzed
// bytes after it are scanned whole, one byte at a time and in fuzzed chunks.
// Properties:
//   - every chunking reports the same messages (their first two bytes);
//   - no more messages than two bytes of input each (a frame header is two);
//   - whole frames put in front of the input are reported, in order,
//     before anything else.
// Built from that file with this one (Fuzz/run.sh, target `benchframes`).
import NavSyncCore

private let head = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBenchFrames(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    let seed = UInt64(input.byte()) << 8 | UInt64(input.byte())
    let leading = Int(input.byte() % 4)
    let bytes = input.rest()
    let stream = head + bytes

    let whole = scan([stream[...]])
    require(whole.count * 2 <= bytes.count, "at most one message per two bytes", "\(whole.count) from \(bytes.count) bytes")
    let oneByOne = scan(stream.indices.map { stream[$0...$0] })
    require(oneByOne == whole, "byte-at-a-time matches whole", "input \(bytes.shown)\n  got \(oneByOne)\n  want \(whole)")
    let chunks = randomChunks(stream, seed: seed)
    require(scan(chunks) == whole, "random chunking matches whole", "chunks \(chunks.map(\.count)), input \(bytes.shown)")

    // Whole text frames first (7- and 16-bit lengths): they come out first, whatever follows.
    var prefix = head
    var expected: [[UInt8]] = []
    for index in 0..<leading {
        let length = 2 + Int(seed >> UInt64(index * 4)) % 200
        let payload = [UInt8(ascii: "E"), UInt8(65 + index)] + Array(repeating: UInt8(ascii: "x"), count: length - 2)
        prefix += length < 126 ? [0x81, UInt8(length)] : [0x81, 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        prefix += payload
        expected.append(Array(payload.prefix(2)))
    }
    let joined = scan([(prefix + bytes)[...]])
    require(Array(joined.prefix(leading)) == expected, "whole frames in front are reported first",
            "got \(joined.prefix(leading)), want \(expected)")
    return 0
}

/// The messages one scanner reports for `chunks`, in order.
private func scan(_ chunks: [ArraySlice<UInt8>]) -> [[UInt8]] {
    var scanner = FrameScanner()
    var messages: [[UInt8]] = []
    for chunk in chunks {
        chunk.withUnsafeBytes { scanner.scan($0) { messages.append([$0, $1]) } }
    }
    return messages
}
