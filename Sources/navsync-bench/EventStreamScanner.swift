import Glibc

/// The server-sent events side of the bench's parsing, as cheap as
/// `LineScanner`: per line of the stream (the response head's lines
/// included), the two bytes after `event: `, that is bytes 7 and 8 (0
/// where the line is shorter). `event: change` gives "ch", `event: state`
/// "st", `event: denied` "de"; no header or other field line of navsyncd's
/// stream has those bytes there. The rest of each line is skipped with `memchr`.
struct EventStreamScanner {
    private static let offset = 7
    private var first: UInt8 = 0
    private var second: UInt8 = 0
    /// Bytes of the current line seen so far, capped at offset + 2.
    private var seen = 0

    @inline(__always)
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onLine: (UInt8, UInt8) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let newline = UInt8(ascii: "\n")
        var index = 0
        let count = bytes.count
        while index < count {
            if seen < Self.offset + 2 {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                if byte == newline {
                    onLine(first, second)
                    first = 0; second = 0; seen = 0
                    continue
                }
                if seen == Self.offset { first = byte } else if seen == Self.offset + 1 { second = byte }
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
