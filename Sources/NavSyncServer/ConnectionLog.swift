/// Where every per-connection line goes (a connection opened, closed,
/// refused, a TLS handshake that failed): through `ConnectionLogBudget`, so
/// past 50 of them in one second the rest of that second becomes one
/// summary line. The daemon gives it a timer (`scheduleSummary`) so the
/// summary is written when the second ends, not only when the next line
/// comes. Lines the log level hides do not count.
/// Must be used on the loop thread only.
public final class ConnectionLog {
    private let log: Logger
    private var budget = ConnectionLogBudget()
    private let milliseconds: () -> UInt64
    /// Runs `write` after the given milliseconds; the daemon's is a libuv
    /// timer. Without one, a summary waits for the next line.
    public var scheduleSummary: ((_ afterMilliseconds: UInt64, _ write: @escaping () -> Void) -> Void)?

    public init(log: Logger, milliseconds: @escaping () -> UInt64) {
        self.log = log
        self.milliseconds = milliseconds
    }

    public func opened(_ message: @autoclosure () -> String, level: LogLevel = .info) {
        write(.opened, level, message)
    }

    public func closed(_ message: @autoclosure () -> String, level: LogLevel = .info) {
        write(.closed, level, message)
    }

    private func write(_ event: ConnectionLogBudget.Event, _ level: LogLevel, _ message: () -> String) {
        guard level >= log.level else { return }
        let now = milliseconds()
        let (owed, admission) = budget.admit(event, level: level, now: now)
        if let owed { emit(owed) }
        switch admission {
        case .write:
            emit(level, message())
        case .withhold(let endOfSecond):
            guard let endOfSecond, let scheduleSummary else { return }
            scheduleSummary(endOfSecond > now ? endOfSecond - now : 0) { [weak self] in self?.writeSummary() }
        }
    }

    /// Writes what the current second withheld, if anything.
    public func writeSummary() {
        if let summary = budget.takeSummary() { emit(summary) }
    }

    private func emit(_ summary: ConnectionLogBudget.Summary) {
        emit(summary.level, summary.line)
    }

    private func emit(_ level: LogLevel, _ line: String) {
        switch level {
        case .debug: log.debug(line)
        case .info: log.info(line)
        case .warn: log.warn(line)
        case .error: log.error(line)
        }
    }
}
