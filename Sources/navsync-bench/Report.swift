import Foundation

/// `navsync-bench report DIR`: the medians of every configuration found in
/// DIR/*.json, printed as a table, written to DIR/summary.json, and one
/// gnuplot data file per system (DIR/plot-SYSTEM.dat).
enum Report {
    struct Row: Codable {
        var system: String
        var n: Int
        var runs: Int
        var lastP50Ms: Double
        var lastP90Ms: Double
        var lastP99Ms: Double
        var lastMaxMs: Double
        var lastMeanMs: Double?
        /// Server + bench CPU per closed-loop change over the cores (RunResult.closedCPUFloorMicros).
        var cpuFloorMs: Double?
        var firstP50Ms: Double
        var firstP99Ms: Double
        var deliveriesPerSecond: Double
        var daemonNsPerDelivery: Double?
        var benchNsPerDelivery: Double
        var closedBenchMicrosPerChange: Double
        var rssPerWatcherBytes: Double?
        var rssIdleKiB: Int?
        var connectSeconds: Double
        var lostEvents: Int
        var errors: Int
        var loads: [String]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    static func medianOptional(_ values: [Double?]) -> Double? {
        let present = values.compactMap { $0 }
        return present.isEmpty ? nil : median(present)
    }

    static func run(directory: String) throws -> String {
        let url = URL(fileURLWithPath: directory)
        let files = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" && $0.lastPathComponent.hasPrefix("run-") }
        let decoder = JSONDecoder()
        var groups: [String: [RunResult]] = [:]
        for file in files {
            guard let result = try? decoder.decode(RunResult.self, from: Data(contentsOf: file)) else { continue }
            groups["\(result.system) \(result.n)", default: []].append(result)
        }
        // `baseline` (an older navsyncd, see bench/run.sh BASE_BIN) sits right after navsync.
        var order = ["navsync", "baseline"] + System.allCases.map(\.rawValue).filter { $0 != "navsync" }
        order.insert("baseline-ws", at: (order.firstIndex(of: "navsync-ws") ?? order.count - 1) + 1)
        order.insert("baseline-tls", at: (order.firstIndex(of: "navsync-tls") ?? order.count - 1) + 1)
        order.insert("baseline-wss", at: (order.firstIndex(of: "navsync-wss") ?? order.count - 1) + 1)
        var rows: [Row] = []
        for runs in groups.values {
            let first = runs[0]
            rows.append(Row(
                system: first.system, n: first.n, runs: runs.count,
                lastP50Ms: median(runs.map { $0.closedLastMicros.p50 / 1000 }),
                lastP90Ms: median(runs.map { $0.closedLastMicros.p90 / 1000 }),
                lastP99Ms: median(runs.map { $0.closedLastMicros.p99 / 1000 }),
                lastMaxMs: median(runs.map { $0.closedLastMicros.max / 1000 }),
                lastMeanMs: median(runs.map { $0.closedLastMicros.mean / 1000 }),
                cpuFloorMs: medianOptional(runs.map { $0.closedCPUFloorMicros.map { $0 / 1000 } }),
                firstP50Ms: median(runs.map { $0.closedFirstMicros.p50 / 1000 }),
                firstP99Ms: median(runs.map { $0.closedFirstMicros.p99 / 1000 }),
                deliveriesPerSecond: median(runs.map(\.deliveriesPerSecond)),
                daemonNsPerDelivery: medianOptional(runs.map(\.daemonCPUNanosPerDelivery)),
                benchNsPerDelivery: median(runs.map(\.benchCPUNanosPerDelivery)),
                closedBenchMicrosPerChange: median(runs.map(\.closedBenchCPUMicrosPerChange)),
                rssPerWatcherBytes: medianOptional(runs.map(\.rssPerWatcherBytes)),
                rssIdleKiB: medianOptional(runs.map { $0.rssIdleKiB.map(Double.init) }).map { Int($0) },
                connectSeconds: median(runs.map(\.connectSeconds)),
                lostEvents: runs.map(\.lostEvents).reduce(0, +),
                errors: runs.map { $0.errors + $0.resyncs }.reduce(0, +),
                loads: runs.map(\.loadBefore)))
        }
        rows.sort { a, b in
            if a.n != b.n { return a.n < b.n }
            let (ra, rb) = (order.firstIndex(of: a.system) ?? 99, order.firstIndex(of: b.system) ?? 99)
            return ra != rb ? ra < rb : a.system < b.system
        }

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(rows).write(to: url.appendingPathComponent("summary.json"))
        for system in order {
            let mine = rows.filter { $0.system == system }
            guard !mine.isEmpty else { continue }
            var text = "# n last_p99_ms deliveries_per_s last_p50_ms daemon_ns_per_delivery\n"
            for row in mine {
                text += "\(row.n) \(row.lastP99Ms) \(row.deliveriesPerSecond) \(row.lastP50Ms) \(row.daemonNsPerDelivery ?? 0)\n"
            }
            try text.write(to: url.appendingPathComponent("plot-\(system).dat"), atomically: true, encoding: .utf8)
        }
        return table(rows)
    }

    static func table(_ rows: [Row]) -> String {
        func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - s.count))
            return left ? s + fill : fill + s
        }
        let header = ["system", "N", "runs", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms", "floor ms", "first p50",
                      "deliv/s", "srv ns/dlv", "bench ns/dlv", "B/watcher", "lost"]
        let cells = rows.map { row in
            [row.system, "\(row.n)", "\(row.runs)", f(row.lastP50Ms, 3), f(row.lastP90Ms, 3),
             f(row.lastP99Ms, 3), f(row.lastMaxMs, 3), f(row.lastMeanMs, 3), f(row.cpuFloorMs, 3),
             f(row.firstP50Ms, 3),
             f(row.deliveriesPerSecond, 0), f(row.daemonNsPerDelivery, 1), f(row.benchNsPerDelivery, 1),
             f(row.rssPerWatcherBytes, 0), "\(row.lostEvents)"]
        }
        // Each column as wide as its widest cell: system names such as
        // baseline-wss are longer than the heading and pushed the row out of line.
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
        var lines: [String] = []
        for line in [header] + cells {
            lines.append(zip(line, widths).enumerated().map { pad($1.0, $1.1, left: $0 == 0) }.joined(separator: " "))
        }
        // Ratios against Redis (the first targets), against the previous
        // build when one was measured, and of WebSocket watchers against TCP ones.
        let ns = Array(Set(rows.map(\.n))).sorted()
        /// One section per comparison whose two systems were both measured: its heading and its ratio lines.
        func section(_ system: String, against other: String, label: String, _ heading: String) -> String {
            let ratioLines = ratios(of: system, against: other, at: ns, in: rows, otherLabel: label)
            return ratioLines.isEmpty ? "" : "\n" + heading + "\n" + ratioLines.joined(separator: "\n") + "\n"
        }
        var out = lines.joined(separator: "\n") + "\n"
        out += section("navsync", against: "baseline", label: "",
                       "navsync (this build) vs baseline (BASE_BIN, measured in the same run):")
        out += section("navsync", against: "redis", label: "redis",
                       "navsync vs redis (ratios of medians; deliveries/s wants > 1, the rest < 1):")
        // A fleet measured with an older daemon in the same run (bench/fleet.sh BASE_BIN).
        for system in Array(Set(rows.map(\.system))).sorted() where rows.contains(where: { $0.system == "base-" + system }) {
            out += section(system, against: "base-" + system, label: "",
                           "\(system) (this build) vs base-\(system) (BASE_BIN, same run):")
        }
        out += section("navsync-ws", against: "navsync", label: "tcp",
                       "navsync-ws (watchers on WebSocket) vs navsync (watchers on TCP), same run:")
        out += section("navsync-sse", against: "navsync", label: "tcp",
                       "navsync-sse (watchers on server-sent events) vs navsync (watchers on TCP), same run:")
        out += section("navsync-tls", against: "navsync", label: "plain",
                       "navsync-tls (watchers inside TLS) vs navsync (plain TCP), same run:")
        out += section("navsync-tls", against: "redis-tls", label: "redis-tls",
                       "navsync-tls vs redis-tls (both with their subscribers inside TLS), same run:")
        out += section("navsync-wss", against: "navsync-ws", label: "ws",
                       "navsync-wss (WebSocket watchers inside TLS) vs navsync-ws (WebSocket watchers in the clear), same run:")
        out += section("navsync-wss", against: "navsync-tls", label: "tls",
                       "navsync-wss (WebSocket watchers inside TLS) vs navsync-tls (line-protocol watchers inside TLS), same run:")
        out += section("baseline-ws", against: "baseline", label: "tcp",
                       "baseline-ws vs baseline (the older navsyncd's WebSocket watchers against its TCP ones), same run:")
        out += section("navsync-ws", against: "baseline-ws", label: "",
                       "navsync-ws (this build) vs baseline-ws (BASE_BIN, WebSocket watchers), same run:")
        out += section("baseline-tls", against: "baseline", label: "plain",
                       "baseline-tls vs baseline (the older navsyncd's TLS watchers against its plain ones), same run:")
        out += section("navsync-tls", against: "baseline-tls", label: "",
                       "navsync-tls (this build) vs baseline-tls (BASE_BIN, TLS watchers), same run:")
        out += section("baseline-wss", against: "baseline-ws", label: "ws",
                       "baseline-wss vs baseline-ws (the older navsyncd's WebSocket watchers inside TLS against in the clear), same run:")
        out += section("navsync-wss", against: "baseline-wss", label: "",
                       "navsync-wss (this build) vs baseline-wss (BASE_BIN, WebSocket watchers inside TLS), same run:")
        let loads = rows.flatMap(\.loads).compactMap { $0.split(separator: " ").first.flatMap { Double($0) } }
        if let low = loads.min(), let high = loads.max() {
            out += "\nmachine load (1-minute average) when the runs started: \(f(low, 2)) to \(f(high, 2)); each run's is in its JSON file.\n"
        }
        out += "\np50/p90/p99/max/mean: closed loop, actor's write to the LAST watcher holding the event; first p50: to the first.\n"
        out += "floor ms: server + bench CPU per closed-loop change / online CPUs; a mean near it is bound by the cores.\n"
        out += "deliv/s: bursts of K changes in one write, N*K / time until every watcher holds all K.\n"
        out += "srv ns/dlv, bench ns/dlv: CPU time of the server / of the bench (helpers included) over the bursts per delivery.\n"
        out += "B/watcher: server RSS growth from connecting N idle subscribed watchers, per watcher.\n"
        return out
    }

    /// One line per N comparing the medians of `system` with `other`'s.
    private static func ratios(of system: String, against other: String, at ns: [Int], in rows: [Row],
                               otherLabel: String) -> [String] {
        ns.compactMap { n -> String? in
            guard let ours = rows.first(where: { $0.system == system && $0.n == n }),
                  let theirs = rows.first(where: { $0.system == other && $0.n == n }) else { return nil }
            let label = otherLabel.isEmpty ? "" : " " + otherLabel
            let cpu = zipOptional(ours.daemonNsPerDelivery, theirs.daemonNsPerDelivery).map { $0 / $1 }
            return "N=\(n): deliveries/s \(f(ours.deliveriesPerSecond / theirs.deliveriesPerSecond, 2))x\(label), "
                + "server CPU/delivery \(f(cpu, 2))x, p50 \(f(ours.lastP50Ms / theirs.lastP50Ms, 2))x, "
                + "p99 \(f(ours.lastP99Ms / theirs.lastP99Ms, 2))x, "
                + "RSS/watcher \(f(ours.rssPerWatcherBytes, 0)) B vs \(f(theirs.rssPerWatcherBytes, 0)) B"
        }
    }

    /// A figure with `decimals` places, or "-" when there is none.
    private static func f(_ v: Double?, _ decimals: Int) -> String {
        guard let v, v.isFinite else { return "-" }
        return String(format: "%.\(decimals)f", v)
    }

    private static func zipOptional(_ a: Double?, _ b: Double?) -> (Double, Double)? {
        guard let a, let b else { return nil }
        return (a, b)
    }

    static func write<Result: Encodable>(_ result: Result, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(result).write(to: URL(fileURLWithPath: path))
    }

    static func summaryLine(_ r: RunResult) -> String {
        func f(_ v: Double?, _ d: Int) -> String { v.map { String(format: "%.\(d)f", $0) } ?? "-" }
        return "\(r.system) n=\(r.n) run \(r.run): last p50 \(f(r.closedLastMicros.p50 / 1000, 3)) ms"
            + " p99 \(f(r.closedLastMicros.p99 / 1000, 3)) ms max \(f(r.closedLastMicros.max / 1000, 3)) ms"
            + " mean \(f(r.closedLastMicros.mean / 1000, 3)) ms (CPU floor \(f(r.closedCPUFloorMicros.map { $0 / 1000 }, 3)) ms);"
            + " first p50 \(f(r.closedFirstMicros.p50 / 1000, 3)) ms;"
            + " burst \(f(r.deliveriesPerSecond, 0)) deliveries/s, server \(f(r.daemonCPUNanosPerDelivery, 1)) ns/delivery,"
            + " bench \(f(r.benchCPUNanosPerDelivery, 1)) ns/delivery;"
            + " RSS/watcher \(f(r.rssPerWatcherBytes, 0)) B; lost \(r.lostEvents), errors \(r.errors), resyncs \(r.resyncs)"
            + " (load \(r.loadBefore))"
    }
}
