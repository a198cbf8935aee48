import Glibc

/// Finds line ends in a byte stream that arrives in arbitrary chunks and
/// reports, per line, the two bytes at `offset` (0 where the line is
/// shorter): the first two for the line protocol, bytes 7 and 8 for a
/// server-sent events stream, where they tell `event: change` ("ch") from
/// `event: state` ("st") and `event: denied` ("de"); no header or other
/// field line of navsyncd's stream has those bytes there. Everything past
/// the two bytes is skipped with `memchr`.
struct LineScanner {
    private let offset: Int
    private var first: UInt8 = 0
    private var second: UInt8 = 0
    /// Bytes of the current line seen so far, capped at offset + 2.
    private var seen = 0

    init(offset: Int = 0) {
        self.offset = offset
    }

    /// The scanner of a server-sent events stream (the response head's lines included).
    static func eventStream() -> LineScanner { LineScanner(offset: 7) }

    @inline(__always)
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onLine: (UInt8, UInt8) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let newline = UInt8(ascii: "\n")
        var index = 0
        let count = bytes.count
        while index < count {
            if seen < offset + 2 {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                if byte == newline {
                    onLine(first, second)
                    first = 0; second = 0; seen = 0
                    continue
                }
                if seen == offset { first = byte } else if seen == offset + 1 { second = byte }
                seen += 1
                continue
            }
            guard let found = memchr(base + index, Int32(newline), count - index) else { return }
            index = UnsafeRawPointer(found) - base + 1
            onLine(first, second)
            first = 0; second = 0; seen = 0
        }
    }
}
