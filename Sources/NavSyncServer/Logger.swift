/// Log levels in increasing severity; lines below the configured level are
/// not even formatted.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug, info, warn, error

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warn: return "warn"
        case .error: return "error"
        }
    }

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// One line per event: the sink adds the timestamp and writes it out, so the
/// server stays free of clocks and file descriptors.
public struct Logger {
    public var level: LogLevel
    private let sink: (LogLevel, String) -> Void

    public init(level: LogLevel, sink: @escaping (LogLevel, String) -> Void) {
        self.level = level
        self.sink = sink
    }

    /// A logger that drops everything (tests).
    public static var silent: Logger { Logger(level: .error) { _, _ in } }

    public func debug(_ message: @autoclosure () -> String) { emit(.debug, message) }
    public func info(_ message: @autoclosure () -> String) { emit(.info, message) }
    public func warn(_ message: @autoclosure () -> String) { emit(.warn, message) }
    public func error(_ message: @autoclosure () -> String) { emit(.error, message) }

    public var isDebugEnabled: Bool { level <= .debug }

    private func emit(_ at: LogLevel, _ message: () -> String) {
        guard at >= level else { return }
        sink(at, message())
    }
}
