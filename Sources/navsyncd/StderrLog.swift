import Foundation
import Glibc
import NavSyncCore
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
        return UTCTimestamp.text(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
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
