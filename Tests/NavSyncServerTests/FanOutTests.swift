import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The fan-out scheduler alone: sessions on in-memory connections, one room,
/// events broadcast and replies queued by the test, then a flush.
final class FanOutTests: XCTestCase {
    private var logged: [String] = []
    private var ended: [Int] = []
    private let room = Room(limits: Limits())
    private let snapshot = RoomState(stack: stack("/red"), revision: 7)

    private func fanOut(maxPending: Int = 100_000, maxOutput: Int? = nil) -> FanOut {
        var limits = limits(maxPending: maxPending)
        if let maxOutput { limits.maxOutputMemoryBytes = maxOutput }
        let fanOut = FanOut(limits: limits, log: Logger(level: .debug) { [unowned self] _, line in logged.append(line) })
        fanOut.currentState = { [snapshot] _ in snapshot }
        fanOut.finishEnding = { [unowned self] session in
            ended.append(session.id)
            session.isEnded = true
            session.connection.closeAfterSending()
        }
        return fanOut
    }

    private var nextID = 1

    private func session() -> (Session, MemoryConnection) {
        let connection = MemoryConnection()
        defer { nextID += 1 }
        return (Session(id: nextID, connection: connection, grant: .unrestricted, maxLineBytes: 1024,
                        liveCount: LiveCount()), connection)
    }

    private func watcher(_ fanOut: FanOut) -> (Session, MemoryConnection) {
        let (session, connection) = session()
        session.watching = true
        room.addWatcher(session)
        fanOut.follow(session, room)
        return (session, connection)
    }

    private let green = Array("EVENT 1 select /green\n".utf8)
    private let blue = Array("EVENT 2 select /blue\n".utf8)

    func test_fanOut_turnEvents_reachEveryWatcherAsOneSharedWrite() {
        let fanOut = fanOut()
        let watchers = (0..<3).map { _ in watcher(fanOut) }
        fanOut.flush()
        fanOut.broadcast(green, to: room)
        fanOut.broadcast(blue, to: room)
        XCTAssertEqual(fanOut.dirty.count, 3, "each watcher is marked once, on the room's first event")
        fanOut.flush()
        for (_, connection) in watchers {
            XCTAssertEqual(connection.writes, [[green + blue]], "one write of the turn's joined events")
        }
        XCTAssertEqual(fanOut.eventsOut, 6)
        XCTAssertTrue(room.turnEvents.isEmpty, "the flush ends the room's turn")
        XCTAssertTrue(fanOut.dirty.isEmpty)
    }

    func test_fanOut_replyAfterTheTurnsEvents_goesOutAfterThem_inTheSameWrite() {
        let fanOut = fanOut()
        let (watching, watcherConnection) = watcher(fanOut)
        let (other, otherConnection) = session()
        fanOut.flush()
        fanOut.broadcast(green, to: room)
        let ok = Array("OK 1\n".utf8)
        fanOut.reply(watching, ok)
        fanOut.reply(other, ok)
        fanOut.broadcast(blue, to: room)
        fanOut.flush()
        XCTAssertEqual(watcherConnection.writes, [[green, ok, blue]])
        XCTAssertEqual(otherConnection.writes, [[ok]], "a session not watching gets only its reply")
        XCTAssertEqual(fanOut.eventsOut, 2)
    }

    func test_fanOut_watcherPastMaxPending_skipsEvents_thenGetsOneStateOnceDrained() {
        let fanOut = fanOut(maxPending: 100)
        let (slow, connection) = watcher(fanOut)
        fanOut.flush()
        connection.queuedWriteBytes = 90
        fanOut.broadcast(green, to: room)
        fanOut.flush()
        XCTAssertEqual(connection.writes, [], "the event would take it past --max-pending")
        XCTAssertTrue(slow.output.owesResync)
        XCTAssertEqual(fanOut.eventsOut, 0, "a skipped event is not counted as handed out")
        XCTAssertTrue(logged.contains { $0.contains("slow watcher") })

        fanOut.broadcast(blue, to: room)
        connection.queuedWriteBytes = 0
        fanOut.markDirty(slow)
        fanOut.flush()
        XCTAssertEqual(connection.lines, ["STATE 7 /red"], "one snapshot instead of the events it missed")
        XCTAssertEqual(fanOut.resyncs, 1)
        XCTAssertFalse(slow.output.owesResync)
    }

    func test_fanOut_overOutputBudget_resyncsLargestQueuesFirst_untilAnEighthIsLeft() {
        let fanOut = fanOut(maxOutput: 1_000)
        let (big, bigConnection) = watcher(fanOut)
        let (middle, middleConnection) = watcher(fanOut)
        let (small, smallConnection) = watcher(fanOut)
        fanOut.flush()
        bigConnection.queuedWriteBytes = 600
        middleConnection.queuedWriteBytes = 300
        smallConnection.queuedWriteBytes = 50
        fanOut.broadcast(green, to: room)
        fanOut.flush()
        XCTAssertEqual(fanOut.heldOutputBytes, 950, "under the bound: counted, nobody resynced")
        XCTAssertEqual(fanOut.backlogged.count, 3)
        XCTAssertFalse(big.output.owesResync || middle.output.owesResync || small.output.owesResync)

        bigConnection.queuedWriteBytes = 900
        fanOut.broadcast(blue, to: room)
        fanOut.flush()
        XCTAssertEqual(fanOut.heldOutputBytes, 1_250)
        XCTAssertTrue(big.output.owesResync, "largest first")
        XCTAssertTrue(middle.output.owesResync, "350 bytes still growing is more than an eighth of 1,000")
        XCTAssertFalse(small.output.owesResync, "50 bytes left growing: within the eighth")
        XCTAssertTrue(logged.contains { $0.contains("2 watcher(s) with the largest queues resynced") })
    }

    func test_fanOut_endingSession_isFinishedAfterItsLastOutputIsWritten() {
        let fanOut = fanOut()
        let (session, connection) = watcher(fanOut)
        fanOut.flush()
        fanOut.broadcast(green, to: room)
        fanOut.reply(session, Array("BYE\n".utf8))
        fanOut.end(session, .quit)
        fanOut.broadcast(blue, to: room)
        fanOut.flush()
        XCTAssertEqual(connection.lines, ["EVENT 1 select /green", "BYE"], "nothing broadcast after the end")
        XCTAssertEqual(connection.calls, ["write", "closeAfterSending"])
        XCTAssertEqual(ended, [session.id])
        XCTAssertEqual(fanOut.eventsOut, 1)
    }
}
