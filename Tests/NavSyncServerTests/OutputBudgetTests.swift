import XCTest
import NavSyncCore
@testable import NavSyncServer

/// `--max-output-memory`: past the bound on output held for all
/// connections together, the watchers with the largest queues are resynced
/// first; small queues and watchers that keep up are left alone.
final class OutputBudgetTests: XCTestCase {
    private func budgetLimits(maxOutput: Int) -> Limits {
        var limits = limits(maxPending: 100_000)
        limits.maxOutputMemoryBytes = maxOutput
        return limits
    }

    func test_overBudget_largestQueuesResyncedFirst_smallDrainingAndEmptyOnesKeepTheirEvents() throws {
        let hub = try Hub(limits: budgetLimits(maxOutput: 8_000))
        let big = hub.connect(), middle = hub.connect(), small = hub.connect(), behind = hub.connect()
        let stalled = hub.connect(), reader = hub.connect(), actor = hub.connect()
        let watchers = [big, middle, small, behind, stalled, reader]
        for watcher in watchers { watcher.run("WATCH") }
        // The transports hold this much each: 7,700 bytes, under the bound.
        big.connection.queuedWriteBytes = 3_000
        middle.connection.queuedWriteBytes = 2_500
        small.connection.queuedWriteBytes = 2_000
        behind.connection.queuedWriteBytes = 100
        stalled.connection.queuedWriteBytes = 100
        XCTAssertEqual(actor.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(hub.server.resyncs, 0)
        for watcher in watchers {
            XCTAssertEqual(watcher.newLines(), ["EVENT 1 select /green"])
        }

        // Now 8,700: over. Resynced largest first until what still takes
        // events is at most an eighth of the bound (1,000 bytes).
        big.connection.queuedWriteBytes = 4_000
        actor.run("SELECT blue")
        XCTAssertTrue(hub.logged("over --max-output-memory 8000"))
        // Still over: a small queue that is draining keeps its events; one
        // whose socket sent nothing since its last flush is stalled.
        behind.connection.queuedWriteBytes = 60
        actor.run("SELECT red")
        XCTAssertEqual(big.newLines(), ["EVENT 2 select /blue"], "resynced after this flush; nothing more")
        XCTAssertEqual(middle.newLines(), ["EVENT 2 select /blue"])
        XCTAssertEqual(small.newLines(), ["EVENT 2 select /blue"])
        XCTAssertEqual(behind.newLines(), ["EVENT 2 select /blue", "EVENT 3 select /red"], "a small draining queue is left alone")
        XCTAssertEqual(stalled.newLines(), ["EVENT 2 select /blue"], "a small stalled queue is resynced while over the bound")
        XCTAssertEqual(reader.newLines(), ["EVENT 2 select /blue", "EVENT 3 select /red"])

        // Once its socket drains, a resynced watcher gets one fresh STATE and then events again.
        big.connection.queuedWriteBytes = 0
        big.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(big.newLines(), ["STATE 3 /red"])
        XCTAssertEqual(actor.stats()["resyncs"], "1")
        actor.run("SELECT green")
        XCTAssertEqual(big.newLines(), ["EVENT 4 select /green"])
        XCTAssertEqual(middle.newLines(), [], "still owed its resync")
    }

    func test_oneFlushCrossingTheBound_watchersAlreadyBehindAreResynced_overshootAtMostAnEighth() throws {
        let bound = 8_000
        let hub = try Hub(limits: budgetLimits(maxOutput: bound))
        let stuck = (0..<20).map { _ in hub.connect() }
        let reader = hub.connect(), actor = hub.connect()
        for watcher in stuck + [reader] { watcher.run("WATCH") }
        // 20 watchers 300 bytes behind: 6,000 bytes, under the bound.
        for watcher in stuck {
            watcher.connection.queuedWriteBytes = 300
            watcher.connection.holdsWrites = true
        }
        actor.run("SELECT green")
        XCTAssertEqual(hub.server.heldOutputBytes, 6_000 + 20 * "EVENT 1 select /green\n".utf8.count)
        // Each event of about 500 bytes would add 10,000 bytes to the stuck ones.
        actor.run("PUSH blue \(String(repeating: "x", count: 480))")
        XCTAssertLessThanOrEqual(hub.server.heldOutputBytes, bound + bound / 8 + 520)
        let gotIt = stuck.filter { $0.newLines().contains { $0.hasPrefix("EVENT 2 ") } }.count
        XCTAssertLessThan(gotIt, 20, "the flush stopped handing events to watchers already behind")
        XCTAssertEqual(reader.newLines().count, 2, "the reader, behind by nothing, got both events")
    }

    func test_flushReachingTheBound_watchersWithEmptyQueues_getWhatTheirSocketTakesAndTheLineCutShort() throws {
        let bound = 8_000
        let hub = try Hub(limits: budgetLimits(maxOutput: bound))
        let stuck = (0..<30).map { _ in hub.connect() }
        let reader = hub.connect(), actor = hub.connect()
        for watcher in stuck + [reader] { watcher.run("WATCH") }
        // Each stuck socket takes 150 bytes more and then nothing; a turn of
        // ten changes is about 1,000 bytes per watcher: 30,000 queued if
        // every empty queue took the whole turn.
        for watcher in stuck { watcher.connection.socketRoom = 150 }
        let data = String(repeating: "x", count: 80)
        for i in 1...10 { actor.send("SELECT blue \(data)\(i)") }
        hub.flush()
        let lineBytes = "EVENT 10 select /blue:\(data)10\n".utf8.count
        XCTAssertLessThanOrEqual(hub.server.heldOutputBytes, bound + stuck.count * lineBytes,
                                 "past the bound each empty queue takes at most the rest of one line")
        let cut = stuck.filter { $0.connection.queuedWriteBytes < 1_000 - 150 }
        XCTAssertFalse(cut.isEmpty, "the watchers reached past the bound were cut short")
        for watcher in cut {
            let lines = watcher.newLines()
            XCTAssertLessThan(lines.count, 10, "not all of them")
            XCTAssertEqual(lines, (0..<lines.count).map { "EVENT \($0 + 1) select /blue:\(data)\($0 + 1)" }, "whole lines, in order")
        }
        XCTAssertEqual(reader.newLines().count, 10, "the reader's socket took everything: every event")
        actor.run("SELECT green")
        XCTAssertTrue(cut.allSatisfy { $0.newLines().isEmpty }, "nothing more for them until their resync")
        XCTAssertEqual(reader.newLines(), ["EVENT 11 select /green"])
    }

    func test_underBudget_manyBackloggedWatchers_nothingResynced() throws {
        let hub = try Hub(limits: budgetLimits(maxOutput: 1_000_000))
        let watchers = (0..<50).map { _ in hub.connect() }
        let actor = hub.connect()
        for watcher in watchers {
            watcher.run("WATCH")
            watcher.connection.queuedWriteBytes = 10_000
        }
        for i in 0..<5 { actor.run("PUSH blue \(i)") }
        XCTAssertEqual(hub.server.resyncs, 0)
        XCTAssertFalse(hub.logged("--max-output-memory"))
        XCTAssertTrue(watchers.allSatisfy { $0.newLines().count == 5 })
    }
}
