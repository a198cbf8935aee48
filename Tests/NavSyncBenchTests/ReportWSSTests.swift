import Foundation
import XCTest
@testable import navsync_bench

/// `navsync-bench report` on runs with WebSocket watchers inside TLS: where
/// their rows sit and which ratios are drawn from them.
final class ReportWSSTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-wss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: directory)
    }

    /// One run's JSON as the bench writes it, with the figures the ratios read.
    private func writeRun(_ system: String, n: Int = 1000, p50Ms: Double, p99Ms: Double, deliveries: Double) throws {
        var result = RunResult()
        result.system = system
        result.n = n
        result.run = 1
        result.loadBefore = "1.00 1.00 1.00"
        var last = Percentiles()
        last.p50 = p50Ms * 1000
        last.p90 = p99Ms * 1000
        last.p99 = p99Ms * 1000
        last.max = p99Ms * 1000
        last.mean = p50Ms * 1000
        result.closedLastMicros = last
        result.deliveriesPerSecond = deliveries
        try Report.write(result, to: directory.appendingPathComponent("run-\(system)-\(n)-1.json").path)
    }

    /// The system column of the table, in order.
    private func systemsInTable(_ table: String) -> [String] {
        table.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
            .prefix { !$0.isEmpty }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    func test_report_wssRows_sitAfterTLSWithTheirBaselineBesideThem() throws {
        for system in ["baseline-wss", "navsync-wss", "navsync-tls", "navsync-ws", "navsync", "redis-tls", "baseline-tls"] {
            try writeRun(system, p50Ms: 10, p99Ms: 20, deliveries: 1e6)
        }
        let table = try Report.run(directory: directory.path)
        XCTAssertEqual(systemsInTable(table),
                       ["navsync", "navsync-ws", "navsync-tls", "baseline-tls", "navsync-wss", "baseline-wss", "redis-tls"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("plot-navsync-wss.dat").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("plot-baseline-wss.dat").path))
    }

    func test_report_table_everyColumnEndsWhereItsHeadingEnds_withLongSystemNames() throws {
        for system in ["baseline-wss", "navsync", "redis-tls"] {
            try writeRun(system, p50Ms: 10.5, p99Ms: 123.25, deliveries: 12_345_678)
        }
        let table = try Report.run(directory: directory.path)
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }.map(String.init)
        XCTAssertEqual(lines.count, 4, table)
        // Each heading ends where the cells under it end (numbers are
        // right-aligned), whatever the length of the system's name.
        let headings = ["N", "runs", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms", "floor ms", "first p50",
                        "deliv/s", "srv ns/dlv", "bench ns/dlv", "B/watcher", "lost"]
        var headingEnds: [Int] = []
        var searchFrom = lines[0].index(lines[0].startIndex, offsetBy: "system".count)
        for heading in headings {
            guard let found = lines[0].range(of: heading, range: searchFrom..<lines[0].endIndex) else {
                return XCTFail("no heading \(heading):\n\(table)")
            }
            headingEnds.append(lines[0].distance(from: lines[0].startIndex, to: found.upperBound))
            searchFrom = found.upperBound
        }
        for line in lines.dropFirst() {
            let characters = Array(line)
            let cellEnds = characters.indices.filter { characters[$0] != " " && ($0 + 1 == characters.count || characters[$0 + 1] == " ") }
                .map { $0 + 1 }
            XCTAssertEqual(Array(cellEnds.dropFirst()), headingEnds, "\n\(table)")
        }
        XCTAssertEqual(lines.dropFirst().map { String($0.prefix(12)) }, ["navsync     ", "baseline-wss", "redis-tls   "])
    }

    func test_report_wssBesideWSAndTLS_drawsBothRatios() throws {
        try writeRun("navsync-ws", p50Ms: 10, p99Ms: 20, deliveries: 2e6)
        try writeRun("navsync-tls", p50Ms: 12, p99Ms: 24, deliveries: 1.5e6)
        try writeRun("navsync-wss", p50Ms: 13, p99Ms: 30, deliveries: 1e6)
        let table = try Report.run(directory: directory.path)
        let lines = table.split(separator: "\n").map(String.init)
        let againstWS = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("navsync-wss (WebSocket watchers inside TLS) vs navsync-ws") })
        XCTAssertEqual(lines[againstWS + 1],
                       "N=1000: deliveries/s 0.50x ws, server CPU/delivery -x, p50 1.30x, p99 1.50x, RSS/watcher - B vs - B")
        let againstTLS = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("navsync-wss (WebSocket watchers inside TLS) vs navsync-tls") })
        XCTAssertEqual(lines[againstTLS + 1],
                       "N=1000: deliveries/s 0.67x tls, server CPU/delivery -x, p50 1.08x, p99 1.25x, RSS/watcher - B vs - B")
        XCTAssertFalse(table.contains("baseline-wss"), "no baseline rows were measured")
    }

    func test_report_baselineWSS_isComparedWithBaselineWSAndNavsyncWSS() throws {
        try writeRun("baseline-ws", p50Ms: 10, p99Ms: 20, deliveries: 2e6)
        try writeRun("baseline-wss", p50Ms: 20, p99Ms: 40, deliveries: 1e6)
        try writeRun("navsync-wss", p50Ms: 15, p99Ms: 20, deliveries: 2e6)
        let lines = try Report.run(directory: directory.path).split(separator: "\n").map(String.init)
        let older = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("baseline-wss vs baseline-ws") })
        XCTAssertEqual(lines[older + 1],
                       "N=1000: deliveries/s 0.50x ws, server CPU/delivery -x, p50 2.00x, p99 2.00x, RSS/watcher - B vs - B")
        let build = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("navsync-wss (this build) vs baseline-wss") })
        XCTAssertEqual(lines[build + 1],
                       "N=1000: deliveries/s 2.00x, server CPU/delivery -x, p50 0.75x, p99 0.50x, RSS/watcher - B vs - B")
        XCTAssertFalse(lines.contains { $0.hasPrefix("navsync-wss (WebSocket watchers inside TLS) vs") },
                       "neither navsync-ws nor navsync-tls was measured")
    }
}
