import XCTest
@testable import NavSyncServer

/// The rules `SessionOutput` keeps by itself, whoever calls it.
final class SessionOutputTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func test_sessionOutput_dropEvents_keepsReplies_countsWhatWent_owesResync() {
        var output = SessionOutput()
        output.append(bytes("OK 1\n"), isEvent: false)
        output.append(bytes("EVENT 1 push /a\n"), isEvent: true)
        output.append(bytes("PONG\n"), isEvent: false)
        XCTAssertEqual(output.queuedBytes, 5 + 16 + 5)
        XCTAssertEqual(output.dropEvents(), 1)
        XCTAssertEqual(output.queue.map(\.bytes), [bytes("OK 1\n"), bytes("PONG\n")])
        XCTAssertEqual(output.queuedBytes, 10, "the bytes follow the queue")
        XCTAssertTrue(output.owesResync)
        output.settleResync()
        XCTAssertFalse(output.owesResync)
    }

    func test_sessionOutput_takeBack_turnsTheBatchsOkIntoTheRefusal_dropsItsEvents_leavesTheRest() {
        var output = SessionOutput()
        output.append(bytes("PONG\n"), isEvent: false)
        output.append(bytes("OK 1\n"), isEvent: false, unsyncedBatch: 7)
        output.append(bytes("EVENT 1 push /a\n"), isEvent: true, unsyncedBatch: 7)
        output.append(bytes("EVENT 0 x\n"), isEvent: true, unsyncedBatch: 6)
        XCTAssertTrue(output.holds(batch: 7))
        output.takeBack(batch: 7, refusal: bytes("ERR internal\n"))
        XCTAssertEqual(output.queue.map(\.bytes), [bytes("PONG\n"), bytes("ERR internal\n"), bytes("EVENT 0 x\n")])
        XCTAssertEqual(output.queuedBytes, 5 + 13 + 10)
        XCTAssertFalse(output.holds(batch: 7))
    }

    func test_sessionOutput_listsAndPause_joinedOnceUntilLeft() {
        var output = SessionOutput()
        XCTAssertTrue(output.markDirty())
        XCTAssertFalse(output.markDirty(), "already in the dirty list")
        output.leftDirtyList()
        XCTAssertTrue(output.markDirty())
        XCTAssertTrue(output.joinBacklog())
        XCTAssertFalse(output.joinBacklog())
        output.leftBacklog()
        XCTAssertFalse(output.isBacklogged)
        XCTAssertTrue(output.pauseReading())
        XCTAssertFalse(output.pauseReading())
        output.resumeReading()
        XCTAssertFalse(output.readingPaused)
    }

    func test_sessionOutput_takeQueue_handsEverythingOver_andEmpties() {
        var output = SessionOutput()
        output.append(bytes("a\n"), isEvent: false)
        output.append(bytes("b\n"), isEvent: true)
        XCTAssertEqual(output.takeQueue().map(\.bytes), [bytes("a\n"), bytes("b\n")])
        XCTAssertTrue(output.queue.isEmpty)
        XCTAssertEqual(output.queuedBytes, 0)
    }
}
