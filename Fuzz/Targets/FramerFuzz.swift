// The line framer, fed the same bytes whole, one byte at a time and in
// fuzzed chunks. Properties:
//   - every chunking yields the same frames;
//   - the frames equal a plain reference model (split on \n, drop one \r
//     before it, anything longer than the limit is one `tooLong`);
//   - no line is over the limit or holds a \n;
//   - between reads the framer never holds more than limit + 1 bytes.
import NavSyncCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFramer(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(data, count)
    // Small limits make overlong lines common. The rule does not depend on
    // the limit's size, so short inputs test it as well as 4096-byte lines
    // would, and many more of them run per second.
    let limitChoice = input.byte()
    let maxLine = limitChoice == 255 ? 512 : 1 + Int(limitChoice % 48)
    let seed = UInt64(input.byte()) << 8 | UInt64(input.byte())
    let bytes = input.rest()

    let expected = referenceFrames(bytes, maxLine: maxLine)
    let whole = frames(of: [bytes[...]], maxLine: maxLine)
    require(whole == expected, "whole input matches the reference model",
            "limit \(maxLine), input \(bytes.shown)\n  got \(whole)\n  want \(expected)")

    let oneByOne = frames(of: bytes.indices.map { bytes[$0...$0] }, maxLine: maxLine)
    require(oneByOne == expected, "byte-at-a-time matches whole", "limit \(maxLine), input \(bytes.shown)")

    let chunks = randomChunks(bytes, seed: seed)
    let chunked = frames(of: chunks, maxLine: maxLine)
    require(chunked == expected, "random chunking matches whole",
            "limit \(maxLine), chunks \(chunks.map(\.count)), input \(bytes.shown)")
    return 0
}

/// What the framer yields, as comparable values: a line's bytes, or nil for `tooLong`.
private func frames(of chunks: [ArraySlice<UInt8>], maxLine: Int) -> [[UInt8]?] {
    var framer = LineFramer(maxLineBytes: maxLine)
    var out: [[UInt8]?] = []
    func take(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let line):
            require(line.count <= maxLine, "no line is over the limit", "\(line.count) > \(maxLine)")
            require(!line.contains(UInt8(ascii: "\n")), "no line holds a newline")
            out.append(Array(line))
        case .tooLong:
            out.append(nil)
        }
    }
    for chunk in chunks {
        framer.append(chunk)
        while let frame = framer.next() { take(frame) }
        require(framer.bufferedByteCount <= maxLine + 1, "the framer holds at most one line between reads",
                "\(framer.bufferedByteCount) bytes held, limit \(maxLine)")
    }
    if let frame = framer.finish() { take(frame) }
    require(framer.bufferedByteCount == 0, "finish leaves nothing behind")
    return out
}

/// The protocol's framing rule written as plainly as possible.
private func referenceFrames(_ bytes: [UInt8], maxLine: Int) -> [[UInt8]?] {
    var out: [[UInt8]?] = []
    var segments = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    // The piece after the last \n is an unterminated line; empty means none.
    let last = segments.removeLast()
    for var segment in segments + (last.isEmpty ? [] : [last]) {
        if segment.last == UInt8(ascii: "\r") { segment = segment.dropLast() }
        out.append(segment.count > maxLine ? nil : Array(segment))
    }
    return out
}
