import Glibc
import NavSyncCore

/// Unbuffered writes to the standard streams: each call is one write(2)
/// (looping over short writes), so `watch` output reaches a pipe line by line.
enum Output {
    /// Writes `text` to stdout; false when stdout is gone (a closed pipe).
    @discardableResult
    static func out(_ text: String) -> Bool { write(1, text) }

    /// Writes text that came from the network to stdout, its line ends kept
    /// and every other control character shown as `\xNN`, so nothing a
    /// daemon (or what fed it) sent can drive the terminal.
    @discardableResult
    static func outFromNetwork(_ text: String) -> Bool { write(1, TerminalSafeText.escaped(text, keepingNewlines: true)) }

    /// Writes `text` to stderr as it is (a prompt, with no line end).
    @discardableResult
    static func errRaw(_ text: String) -> Bool { write(2, text) }

    /// Writes one line to stderr.
    static func err(_ line: String) { _ = write(2, line.hasSuffix("\n") ? line : line + "\n") }

    /// A diagnostic with the program name, as usage errors and failures print.
    static func complain(_ message: String) { err("navsync: \(message)") }

    /// A log line for long-running commands: UTC timestamp, level, message.
    static func log(_ level: String, _ message: String) { err("\(timestamp()) \(level) \(message)") }

    /// Milliseconds as seconds with one decimal: 1250 → "1.3s".
    static func seconds(_ milliseconds: UInt64) -> String {
        let tenths = (milliseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10)s"
    }

    private static func write(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 1000)
                    continue
                }
                return false
            }
            offset += n
        }
        return true
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UTCTimestamp.text(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }
}
