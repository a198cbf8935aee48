import XCTest
import NavSyncCore
@testable import NavSyncServer

/// STATS and /metrics are one table of figures (docs/PROTOCOL.md, "STATS
/// reports"): every daemon-wide STATS figure has one metric, every metric
/// its STATS key, with the same value.
final class FigureTableTests: XCTestCase {
    /// The metric names the contract fixes, apart from the `navsync_` + key rule.
    private let contractNames = ["watchers_total": "navsync_watchers", "uptime_s": "navsync_uptime_seconds",
                                 "version": "navsync_build_info", "members_total": "navsync_members"]
    /// Daemon-wide figures that are words in STATS and have no metric, and why.
    private let wordsWithoutMetric: Set<String> = [
        "persistence",  // a setting's name; no number to plot
    ]

    func test_table_daemonFiguresHaveOneMetricEach_roomFiguresNone() throws {
        let hub = try Hub(store: LateStore())
        let client = hub.connect()
        hub.server.addFigures { [.counter("door_knocks", 7, help: "Knocks.")] }
        let table = hub.server.figures(askedBy: client.session)
        XCTAssertEqual(Set(table.map(\.key)).count, table.count, "no key twice")
        var names: [String] = []
        for figure in table {
            switch (figure.scope, figure.kind) {
            case (.askingRoom, _):
                XCTAssertNil(figure.metricName, figure.key)
            case (.daemon, .word):
                XCTAssertTrue(wordsWithoutMetric.contains(figure.key), "\(figure.key) is a word with no metric")
                XCTAssertNil(figure.metricName, figure.key)
            case (.daemon, let kind):
                let name = try XCTUnwrap(figure.metricName, figure.key)
                let expected = contractNames[figure.key] ?? "navsync_" + figure.key + (kind == .counter ? "_total" : "")
                XCTAssertEqual(name, expected, figure.key)
                names.append(name)
            }
        }
        XCTAssertEqual(Set(names).count, names.count, "no metric twice")
        XCTAssertEqual(Set(table.filter { $0.scope == .askingRoom }.map(\.key)), ["watchers", "members", "rev", "room"])
        XCTAssertTrue(names.contains("navsync_late_pending"), "the store's rows are in the table")
        XCTAssertTrue(names.contains("navsync_door_knocks_total"), "added rows are in the table")
    }

    func test_statsAndMetrics_showTheSameFiguresWithTheSameValues() throws {
        let hub = try Hub(limits: limits(maxClients: 50), store: LateStore())
        hub.clock = 42
        var knocks: UInt64 = 3
        hub.server.addFigures { [.counter("door_knocks", knocks, help: "Knocks.")] }
        let a = hub.connect(), b = hub.connect()
        a.run("WATCH")
        b.run("JOIN side", "WATCH", "PING", "FLY")
        knocks = 5
        let stats = a.stats()
        let metrics = try Self.parse(hub.server.metricsText())
        let table = hub.server.figures(askedBy: a.session)

        // Every metric comes from a STATS key and shows its value.
        for (name, sample) in metrics.samples {
            let figure = try XCTUnwrap(table.first { $0.metricName == name }, "\(name) has no STATS key")
            let statsValue = try XCTUnwrap(stats[figure.key], figure.key)
            if name == "navsync_build_info" {
                XCTAssertEqual(sample, "{version=\"9.9.9-test\"} 1")
                XCTAssertEqual(statsValue, "9.9.9-test")
            } else {
                XCTAssertEqual(sample, " " + statsValue, name)
            }
        }
        // Every daemon-wide STATS figure that is a number has its metric.
        for figure in table where figure.scope == .daemon && !wordsWithoutMetric.contains(figure.key) {
            let name = try XCTUnwrap(figure.metricName, figure.key)
            XCTAssertNotNil(metrics.samples[name], "STATS \(figure.key) has no metric \(name)")
        }
        XCTAssertEqual(stats.count, metrics.samples.count + 4 + wordsWithoutMetric.count,
                       "STATS has the metrics, the asking room's four figures, and the words")
        XCTAssertEqual(metrics.samples["navsync_connections"], " 2")
        XCTAssertEqual(metrics.samples["navsync_watchers"], " 2")
        XCTAssertEqual(metrics.samples["navsync_members"], " 2")
        XCTAssertEqual(metrics.samples["navsync_commands_total"], " 6")
        XCTAssertEqual(metrics.samples["navsync_uptime_seconds"], " 42")
        XCTAssertEqual(metrics.samples["navsync_max_clients"], " 50")
        XCTAssertEqual(metrics.samples["navsync_door_knocks_total"], " 5", "added rows are asked afresh")
        XCTAssertEqual(stats["door_knocks"], "5")
    }

    func test_metricsText_everyMetricHasHelpAndType_countersEndInTotal() throws {
        let hub = try Hub()
        hub.connect().run("PUSH blue")
        let metrics = try Self.parse(hub.server.metricsText())
        XCTAssertFalse(metrics.samples.isEmpty)
        for name in metrics.samples.keys {
            XCTAssertFalse(metrics.help[name, default: ""].isEmpty, "\(name) has no # HELP")
            let type = try XCTUnwrap(metrics.types[name], "\(name) has no # TYPE")
            XCTAssertTrue(name.hasPrefix("navsync_"), name)
            XCTAssertEqual(type == "counter", name.hasSuffix("_total"), "\(name) is a \(type)")
        }
        for name in ["navsync_connections", "navsync_watchers", "navsync_rooms", "navsync_changes_total",
                     "navsync_events_out_total", "navsync_resyncs_total", "navsync_commands_total",
                     "navsync_uptime_seconds", "navsync_build_info", "navsync_max_clients"] {
            XCTAssertNotNil(metrics.samples[name], "the contract's \(name)")
        }
        XCTAssertEqual(metrics.samples["navsync_changes_total"], " 1")
    }

    func test_figure_rendersSamplesAndEscapesItsLabel() {
        let rows: [Figure] = [
            Figure(key: "version", help: "Version.", kind: .label("version"), value: "1.0 \"q\" \\",
                   metricName: "navsync_build_info"),
            .counter("hops", 3, help: "Hops."),
            .gauge("level", -2, help: "Level."),
            .gauge("mine", 1, help: "Mine.", scope: .askingRoom),
            .word("mode", "fast", help: "Mode."),
        ]
        XCTAssertEqual(rows.metricsText, """
            # HELP navsync_build_info Version.
            # TYPE navsync_build_info gauge
            navsync_build_info{version="1.0 \\"q\\" \\\\"} 1
            # HELP navsync_hops_total Hops.
            # TYPE navsync_hops_total counter
            navsync_hops_total 3
            # HELP navsync_level Level.
            # TYPE navsync_level gauge
            navsync_level -2

            """)
        XCTAssertEqual(rows.statsPairs.map { "\($0.key) \($0.value)" },
                       ["version 1.0 \"q\" \\", "hops 3", "level -2", "mine 1", "mode fast"])
    }

    /// The exposition text split into samples (name to the rest of the
    /// line: labels and value), help and type, each name once.
    private static func parse(_ text: String) throws -> (samples: [String: String], help: [String: String],
                                                         types: [String: String]) {
        var samples: [String: String] = [:], help: [String: String] = [:], types: [String: String] = [:]
        XCTAssertTrue(text.hasSuffix("\n"))
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                XCTAssertEqual(parts.count, 4, line)
                if parts[1] == "HELP" { help[parts[2]] = parts[3] } else { types[parts[2]] = parts[3] }
                continue
            }
            let end = try XCTUnwrap(line.firstIndex { $0 == " " || $0 == "{" }, line)
            let name = String(line[..<end])
            XCTAssertNil(samples[name], "\(name) twice")
            samples[name] = String(line[end...])
        }
        return (samples, help, types)
    }
}
