/// The rule that keeps a flood of connections from flooding the log
/// (PROTOCOL.md *Guessing*): per-connection lines are written as before,
/// up to `linesPerSecond` in one second of the clock; the rest of that
/// second is counted, and summarised in one line when the second ends.
///
/// A pure type: the time is passed in. Whoever holds it writes the summary
/// when the second is over (a timer in the daemon) and, should that come
/// late, before the first line of a later second.
public struct ConnectionLogBudget: Sendable {
    public static let defaultLinesPerSecond = 50

    public enum Event: Sendable {
        case opened
        case closed
    }

    /// Lines of one second that were not written.
    public struct Summary: Equatable, Sendable {
        public var opened: Int
        public var closed: Int
        /// The most severe level among them, so the summary is seen
        /// wherever one of them would have been.
        public var level: LogLevel

        public var line: String { "… and \(opened) more connections opened, \(closed) closed" }
    }

    public enum Admission: Equatable, Sendable {
        /// Write the line.
        case write
        /// Counted for the summary; `endOfSecond` is when that second ends
        /// (milliseconds) on the first line withheld in it, so the holder
        /// arms its timer once, nil afterwards.
        case withhold(endOfSecond: UInt64?)
    }

    public let linesPerSecond: Int
    private var second: UInt64?
    private var linesThisSecond = 0
    private var withheld: Summary?

    public init(linesPerSecond: Int = defaultLinesPerSecond) {
        self.linesPerSecond = linesPerSecond
    }

    /// Judges one line. A summary still owed for an earlier second comes
    /// back first, to be written before this line.
    public mutating func admit(_ event: Event, level: LogLevel, now: UInt64) -> (owed: Summary?, admission: Admission) {
        let current = now / 1000
        var owed: Summary?
        if second != current {
            owed = takeSummary()
            second = current
            linesThisSecond = 0
        }
        guard linesThisSecond >= linesPerSecond else {
            linesThisSecond += 1
            return (owed, .write)
        }
        let first = withheld == nil
        var summary = withheld ?? Summary(opened: 0, closed: 0, level: level)
        switch event {
        case .opened: summary.opened += 1
        case .closed: summary.closed += 1
        }
        summary.level = max(summary.level, level)
        withheld = summary
        return (owed, .withhold(endOfSecond: first ? (current + 1) * 1000 : nil))
    }

    /// What was withheld so far, which is then forgotten; nil when nothing was.
    public mutating func takeSummary() -> Summary? {
        defer { withheld = nil }
        return withheld
    }
}
