import Foundation

/// `navsync-bench restart-report DIR`: the medians of DIR/restart-*.json by
/// scenario (mode, rooms, watchers, behind, missed, signal), as a table,
/// followed by the history figures of DIR/history.json when present.
enum RestartReport {
    static func run(directory: String) throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasPrefix("restart-") && $0.hasSuffix(".json") }.sorted()
        let decoder = JSONDecoder()
        var groups: [String: [RestartBench.Result]] = [:]
        var order: [String] = []
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            let result = try decoder.decode(RestartBench.Result.self, from: data)
            let key = "\(result.behind) \(result.missed) \(result.signal) \(result.mode)"
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(result)
        }
        order.sort { a, b in
            let x = a.split(separator: " "), y = b.split(separator: " ")
            let ax = (Int(x[0])!, Int(x[1])!, String(x[2]), x[3] == "resume" ? 0 : 1)
            let bx = (Int(y[0])!, Int(y[1])!, String(y[2]), y[3] == "resume" ? 0 : 1)
            return ax < bx
        }
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }
        var out = "mode    behind missed signal runs ready ms current ms connected ms  B/watcher  B/answer CONTINUE  STATE  EVENT daemon CPU ms\n"
        for key in order {
            let runs = groups[key]!
            let first = runs[0]
            func med(_ pick: (RestartBench.Result) -> Double) -> Double { Report.median(runs.map(pick)) }
            out += first.mode.padding(toLength: 7, withPad: " ", startingAt: 0)
                + pad("\(first.behind)", 7) + pad("\(first.missed)", 7) + pad(first.signal, 7) + pad("\(runs.count)", 5)
                + pad(format(med { $0.daemonReadyMs }, 1), 9) + pad(format(med { $0.currentMs }, 1), 11)
                + pad(format(med { $0.reconnectMs }, 1), 13)
                + pad(format(med { Double($0.bytesTotal) / Double($0.watchers) }, 1), 11)
                + pad(format(med { Double($0.bytesWatchAnswers) / Double($0.watchers) }, 1), 10)
                + pad("\(Int(med { Double($0.continues) }))", 9) + pad("\(Int(med { Double($0.states) }))", 7)
                + pad("\(Int(med { Double($0.events) }))", 7)
                + pad(Report.medianOptional(runs.map { $0.daemonCPUMs }).map { format($0, 1) } ?? "-", 14) + "\n"
        }
        if let first = groups.values.first?.first {
            out += "\n\(first.watchers) watchers over \(first.rooms) rooms, \(first.changesBefore) changes per room before;"
                + " medians. behind: changes per room made after the watchers left and before the restart;"
                + " missed: changes per room after the restart, before they came back.\n"
                + "ready: new process to first accepted connection; current / connected: from the reconnect until every"
                + " watcher holds its room's revision / is connected. B/watcher: everything read after reconnecting;"
                + " B/answer: less the JOIN's STATE.\n"
        }
        let historyPath = directory + "/history.json"
        if FileManager.default.fileExists(atPath: historyPath) {
            let data = try Data(contentsOf: URL(fileURLWithPath: historyPath))
            out += "\n" + HistoryBench.summaryLine(try decoder.decode(HistoryBench.Result.self, from: data)) + "\n"
        }
        return out
    }
}
