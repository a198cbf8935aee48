import XCTest
@testable import NavSyncServer

/// The log budget for per-connection lines, on its own clock.
final class ConnectionLogBudgetTests: XCTestCase {
    func test_connectionLogBudget_fiftyLinesASecond_thenCountedForOneSummary() {
        var budget = ConnectionLogBudget()
        for i in 0..<50 {
            XCTAssertEqual(budget.admit(i % 2 == 0 ? .opened : .closed, level: .info, now: 5_000 + UInt64(i)).admission, .write)
        }
        XCTAssertEqual(budget.admit(.opened, level: .info, now: 5_100).admission, .withhold(endOfSecond: 6_000))
        XCTAssertEqual(budget.admit(.closed, level: .warn, now: 5_200).admission, .withhold(endOfSecond: nil))
        XCTAssertEqual(budget.admit(.opened, level: .info, now: 5_999).admission, .withhold(endOfSecond: nil))
        let summary = budget.takeSummary()
        XCTAssertEqual(summary, .init(opened: 2, closed: 1, level: .warn))
        XCTAssertEqual(summary?.line, "… and 2 more connections opened, 1 closed")
        XCTAssertNil(budget.takeSummary())
    }

    func test_connectionLogBudget_aNewSecond_writesAgain_andHandsBackASummaryStillOwed() {
        var budget = ConnectionLogBudget(linesPerSecond: 1)
        XCTAssertEqual(budget.admit(.opened, level: .info, now: 0).admission, .write)
        XCTAssertEqual(budget.admit(.opened, level: .info, now: 1).admission, .withhold(endOfSecond: 1_000))
        let next = budget.admit(.closed, level: .info, now: 1_000)
        XCTAssertEqual(next.owed, .init(opened: 1, closed: 0, level: .info))
        XCTAssertEqual(next.admission, .write)
        let later = budget.admit(.closed, level: .info, now: 1_001)
        XCTAssertNil(later.owed)
        XCTAssertEqual(later.admission, .withhold(endOfSecond: 2_000))
    }
}

/// The hub's per-connection lines go through the budget.
final class ConnectionLogTests: XCTestCase {
    func test_connectionLog_aFloodOfConnections_fiftyLinesThenOneSummary() throws {
        let hub = try Hub()
        var due: [UInt64] = []
        var write: (() -> Void)?
        hub.server.connectionLog.scheduleSummary = { after, summary in
            due.append(after)
            write = summary
        }
        hub.clock = 7
        for _ in 0..<40 { hub.connect().run("QUIT") }
        XCTAssertEqual(hub.logLines.filter { $0.1.contains(" connected (") }.count, 25)
        XCTAssertEqual(hub.logLines.filter { $0.1.contains(" closed: ") }.count, 25)
        XCTAssertEqual(due, [1_000], "one timer, for the end of the second")
        XCTAssertFalse(hub.logged("more connections"))
        write?()
        XCTAssertTrue(hub.logged("… and 15 more connections opened, 15 closed"), "\(hub.logLines.suffix(2))")
        // The next second writes lines again.
        hub.clock = 8
        _ = hub.connect()
        XCTAssertEqual(hub.logLines.last?.1.contains(" connected ("), true)
    }

    func test_connectionLog_linesTheLevelHides_doNotCount() {
        var written: [String] = []
        let log = ConnectionLog(log: Logger(level: .warn) { _, line in written.append(line) }, milliseconds: { 0 })
        log.scheduleSummary = { _, _ in XCTFail("nothing was withheld") }
        for _ in 0..<60 { log.opened("hidden at warn") }
        for i in 0..<50 { log.closed("refused \(i)", level: .warn) }
        XCTAssertEqual(written.count, 50)
        XCTAssertEqual(written.last, "refused 49")
    }
}
