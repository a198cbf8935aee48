import Glibc

/// Finds line ends in a byte stream that arrives in arbitrary chunks and
/// reports, per line, its first two bytes (0 where the line is shorter).
/// Everything past the second byte is skipped with `memchr`.
struct LineScanner {
    private var first: UInt8 = 0
    private var second: UInt8 = 0
    /// Bytes of the current line seen so far, capped at 2.
    private var seen = 0

    @inline(__always)
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onLine: (UInt8, UInt8) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let newline = UInt8(ascii: "\n")
        var index = 0
        let count = bytes.count
        while index < count {
            if seen < 2 {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                if byte == newline {
                    onLine(first, second)
                    first = 0; second = 0; seen = 0
                    continue
                }
                if seen == 0 { first = byte } else { second = byte }
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
