/// The line protocol over WebSocket messages: one text message from the
/// client holds one or more command lines; every line the server sends is
/// one text message without its `\n`.
///
/// Both directions reuse the TCP path: a message becomes bytes for the same
/// line framer (so `--max-line`, blank lines and `\r\n` behave identically),
/// and the server's output, already encoded as lines, is cut back into lines.
public enum WebSocketLines {
    /// Framer input for one client message: the message, ended by a `\n`
    /// when it does not end in one, so its last line never runs into the
    /// next message's first.
    public static func framerInput(forMessage message: some Collection<UInt8>) -> [UInt8] {
        var bytes = Array(message)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        return bytes
    }

    /// Cuts server output into the payloads of text messages. The server
    /// only ever writes whole lines; a tail with no `\n` (never expected) is
    /// kept for the next call rather than sent as a truncated message.
    public struct OutputSplitter: Sendable {
        private var tail: [UInt8] = []

        public init() {}

        /// Part of a line is kept from an earlier chunk, waiting for its end.
        public var holdsPartialLine: Bool { !tail.isEmpty }

        /// Calls `body` with each message's payload in order; the hot path
        /// (one call per line per WebSocket watcher), so nothing is collected.
        public mutating func forEachMessage(in chunk: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
            var start = chunk.startIndex
            while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
                if tail.isEmpty {
                    body(chunk[start..<newline])
                } else {
                    body(ArraySlice(tail + chunk[start..<newline]))
                    tail = []
                }
                start = newline + 1
            }
            if start < chunk.endIndex { tail += chunk[start...] }
        }

        public mutating func messages(from chunk: [UInt8]) -> [ArraySlice<UInt8>] {
            var messages: [ArraySlice<UInt8>] = []
            forEachMessage(in: chunk) { messages.append($0) }
            return messages
        }
    }
}
