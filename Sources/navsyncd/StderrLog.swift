import Foundation
import Glibc
import NavSyncServer

/// Writes log lines to standard error with a UTC timestamp and the level:
/// `2026-11-29T15:04:05.123Z info listening on 127.0.0.1:7878`.
enum StderrLog {
    static func logger(level: LogLevel) -> Logger {
        Logger(level: level) { level, message in write(level.name, message) }
    }

    /// Bypasses the level filter: supervisors wait for these lines.
    static func always(_ message: String) { write("info", message) }

    static func write(_ level: String, _ message: String) {
        FileHandle.standardError.write(Data("\(timestamp()) \(level) \(message)\n".utf8))
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}

/// Log lines held back and written later, in order, each with its level.
final class HeldLog {
    private var lines: [(level: LogLevel, message: String)] = []
    private(set) var logger: Logger = .silent

    init(level: LogLevel) {
        logger = Logger(level: level) { [unowned self] level, message in self.lines.append((level, message)) }
    }

    /// Writes the held lines to standard error.
    func release() {
        for line in lines { StderrLog.write(line.level.name, line.message) }
        lines.removeAll()
    }
}
