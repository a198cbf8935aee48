/// Splits a byte stream into lines of at most `maxLineBytes`, without ever
/// holding more than one line plus the last read. It remembers how far it has
/// searched for a newline so a slowly arriving line is never rescanned.
public struct LineFramer: Sendable {
    public enum Frame: Equatable, Sendable {
        /// A complete line without its `\n` (and without a `\r` right before it).
        case line(ArraySlice<UInt8>)
        /// The current line passed the limit. Reported once, as soon as it is
        /// known; the rest of that line up to its `\n` is discarded.
        case tooLong
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes before this index are consumed.
    private var start = 0
    /// Bytes in `start..<scanned` are known to hold no `\n`.
    private var scanned = 0
    /// True while skipping the remainder of an overlong line.
    private var discarding = false

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes > 0)
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes held for the line being assembled.
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next frame, or nil when more bytes are needed.
    public mutating func next() -> Frame? {
        while true {
            let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n"))
            if discarding {
                guard let newline else {
                    // Nothing of this line is kept, however much arrives.
                    buffer.removeAll(keepingCapacity: buffer.capacity <= 65_536)
                    start = 0
                    scanned = 0
                    return nil
                }
                discarding = false
                start = newline + 1
                scanned = start
                continue
            }
            guard let newline else {
                scanned = buffer.count
                let pending = buffer.count - start
                // A line of exactly the limit may still be waiting for "\n" after its "\r".
                let awaitingLF = pending == maxLineBytes + 1 && buffer.last == UInt8(ascii: "\r")
                if pending > maxLineBytes && !awaitingLF {
                    discarding = true
                    start = buffer.count
                    scanned = start
                    return .tooLong
                }
                return nil
            }
            var end = newline
            if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer[start..<end]
            start = newline + 1
            scanned = start
            return line.count > maxLineBytes ? .tooLong : .line(line)
        }
    }

    /// At end of input: the unterminated last line, if any, so a client that
    /// closes without a final newline still gets its command run.
    public mutating func finish() -> Frame? {
        defer {
            buffer.removeAll()
            start = 0
            scanned = 0
        }
        guard !discarding, buffer.count > start else { return nil }
        var line = buffer[start...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return line.count > maxLineBytes ? .tooLong : .line(line)
    }
}
