/// One figure the daemon reports. A single row feeds both `STATS` (its key
/// and value) and `/metrics` (its metric name, help, type and value), so
/// the two lists are one list and cannot drift apart (docs/PROTOCOL.md,
/// "STATS reports").
public struct Figure: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Starts at 0 with the daemon and only goes up; its metric name ends in `_total`.
        case counter
        /// A level that goes up and down.
        case gauge
        /// A word in `STATS`; in `/metrics` the word is carried by a label
        /// of this name on a metric whose value is always 1 (the version).
        case label(String)
        /// A word in `STATS` with no metric: the name of a setting, or the
        /// word form of a state whose numeric form is a figure of its own
        /// (`backplane up` next to `backplane_up 1`). A time series whose
        /// label changes with the state would be the wrong tool for it.
        case word
    }

    public enum Scope: Sendable, Equatable {
        /// About the whole daemon: in `STATS` and in `/metrics`.
        case daemon
        /// About the room of the connection that asks (`watchers`, `rev`):
        /// `/metrics` has no asking connection, so these are `STATS` only.
        case askingRoom
    }

    public let key: String
    public let help: String
    public let kind: Kind
    public let scope: Scope
    /// As `STATS` shows it; for counters and gauges, decimal digits.
    public let value: String
    /// The contract names a few metrics other than by the rule
    /// (`watchers_total` is `navsync_watchers`); nil follows the rule.
    private let metricNameOverride: String?

    public init(key: String, help: String, kind: Kind, scope: Scope = .daemon, value: String, metricName: String? = nil) {
        self.key = key
        self.help = help
        self.kind = kind
        self.scope = scope
        self.value = value
        self.metricNameOverride = metricName
    }

    public static func counter(_ key: String, _ value: UInt64, help: String, metricName: String? = nil) -> Figure {
        Figure(key: key, help: help, kind: .counter, value: String(value), metricName: metricName)
    }

    public static func gauge<Level: BinaryInteger>(_ key: String, _ value: Level, help: String,
                                                   scope: Scope = .daemon, metricName: String? = nil) -> Figure {
        Figure(key: key, help: help, kind: .gauge, scope: scope, value: String(value), metricName: metricName)
    }

    public static func word(_ key: String, _ value: String, help: String, scope: Scope = .daemon) -> Figure {
        Figure(key: key, help: help, kind: .word, scope: scope, value: value)
    }

    /// The `/metrics` name: `navsync_` + key, with `_total` for a counter,
    /// unless the contract says otherwise; nil when the figure has no metric.
    public var metricName: String? {
        guard scope == .daemon, kind != .word else { return nil }
        if let metricNameOverride { return metricNameOverride }
        return "navsync_" + key + (kind == .counter ? "_total" : "")
    }

    /// The Prometheus type word.
    var metricType: String { kind == .counter ? "counter" : "gauge" }

    /// The sample line, without its newline; nil when there is no metric.
    var sample: String? {
        guard let name = metricName else { return nil }
        if case .label(let label) = kind {
            return "\(name){\(label)=\"\(Self.escapedLabelValue(value))\"} 1"
        }
        return "\(name) \(value)"
    }

    /// Backslash and double quote are escaped inside a label value; a
    /// newline cannot occur (figures are single words).
    private static func escapedLabelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}

extension Array where Element == Figure {
    /// The `STAT` lines' keys and values, in the table's order.
    public var statsPairs: [(key: String, value: String)] {
        map { (key: $0.key, value: $0.value) }
    }

    /// Prometheus text exposition (version 0.0.4) of the figures that have
    /// a metric, each with its `# HELP` and `# TYPE` lines.
    public var metricsText: String {
        var text = ""
        for figure in self {
            guard let name = figure.metricName, let sample = figure.sample else { continue }
            text += "# HELP \(name) \(figure.help)\n# TYPE \(name) \(figure.metricType)\n\(sample)\n"
        }
        return text
    }
}
