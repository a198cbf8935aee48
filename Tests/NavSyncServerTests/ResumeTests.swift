import XCTest
import NavSyncCore
@testable import NavSyncServer

/// `WATCH <rev>`: CONTINUE and the missed events from the room's
/// history, or a STATE resync when they are not all held.
final class ResumeTests: XCTestCase {
    private func hub(history: Int = 1024, historyBytes: Int = 1 << 20, maxPending: Int? = nil) throws -> Hub {
        var limits = limits(maxPending: maxPending)
        limits.historyCount = history
        limits.historyBytes = historyBytes
        return try Hub(limits: limits)
    }

    func test_watchAfter_replaysTheMissedEventsThenLiveOnes() throws {
        let hub = try hub()
        let actor = hub.connect(), watcher = hub.connect()
        actor.run("SELECT green", "PUSH blue a", "PRESENT red")
        XCTAssertEqual(watcher.run("WATCH 1"), ["CONTINUE 1", "EVENT 2 push /green/blue:a", "EVENT 3 present /green/blue:a#red"])
        actor.run("DISMISS")
        XCTAssertEqual(watcher.run(), ["EVENT 4 dismiss /green/blue:a"])
    }

    func test_watchAtTheCurrentRevision_isContinueAlone() throws {
        let hub = try hub()
        let actor = hub.connect(), watcher = hub.connect()
        XCTAssertEqual(watcher.run("WATCH 0"), ["CONTINUE 0"], "an untouched room is at 0")
        actor.run("SELECT green")
        XCTAssertEqual(watcher.run(), ["EVENT 1 select /green"])
        XCTAssertEqual(hub.connect().run("WATCH 1"), ["CONTINUE 1"])
    }

    func test_watchAfter_outsideTheHistory_isAStateResync() throws {
        let hub = try hub(history: 3)
        let actor = hub.connect()
        for i in 1...6 { actor.run("PUSH blue \(i)") }   // holds 4...6
        XCTAssertEqual(hub.connect().run("WATCH 2"), ["STATE 6 /red/blue:1/blue:2/blue:3/blue:4/blue:5/blue:6"],
                       "one older than the oldest held")
        XCTAssertEqual(hub.connect().run("WATCH 3"), ["CONTINUE 3", "EVENT 4 push /red/blue:1/blue:2/blue:3/blue:4",
                                                        "EVENT 5 push /red/blue:1/blue:2/blue:3/blue:4/blue:5",
                                                        "EVENT 6 push /red/blue:1/blue:2/blue:3/blue:4/blue:5/blue:6"])
        XCTAssertEqual(hub.connect().run("WATCH 7").first, "STATE 6 /red/blue:1/blue:2/blue:3/blue:4/blue:5/blue:6",
                       "newer than the room")
    }

    func test_historyIsNotKeptAcrossARestart() throws {
        let restarted = try Hub(rooms: ["main": RoomState(stack: stack("/green"), revision: 9)])
        XCTAssertEqual(restarted.connect().run("WATCH 8"), ["STATE 9 /green"])
        XCTAssertEqual(restarted.connect().run("WATCH 9"), ["CONTINUE 9"])
        let actor = restarted.connect()
        actor.run("PUSH red")
        XCTAssertEqual(restarted.connect().run("WATCH 9"), ["CONTINUE 9", "EVENT 10 push /green/red"])
    }

    func test_replayOrder_liveEventsOfTheSameTurnComeAfterTheReplay() throws {
        let hub = try hub()
        let actor = hub.connect(), watcher = hub.connect()
        actor.run("SELECT green")
        // One loop turn: two changes, then the resume, then one more change.
        actor.send("PUSH blue x", "PUSH red")
        watcher.send("WATCH 1")
        actor.send("POP")
        hub.flush()
        XCTAssertEqual(watcher.newLines(), ["CONTINUE 1", "EVENT 2 push /green/blue:x", "EVENT 3 push /green/blue:x/red",
                                            "EVENT 4 pop /green/blue:x"])
    }

    func test_reWatchWithRevision_replacesTheSubscription() throws {
        let hub = try hub()
        let actor = hub.connect(), watcher = hub.connect()
        watcher.run("WATCH")
        actor.run("SELECT green", "SELECT blue")
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 select /green", "EVENT 2 select /blue"])
        XCTAssertEqual(watcher.run("WATCH 1"), ["CONTINUE 1", "EVENT 2 select /blue"])
        actor.run("SELECT red")
        XCTAssertEqual(watcher.newLines(), ["EVENT 3 select /red"], "one subscription, not two")
        XCTAssertEqual(watcher.stats()["watchers"], "1")
    }

    func test_replayPastMaxPending_endsInAStateResync() throws {
        let hub = try hub(maxPending: 300)
        let actor = hub.connect()
        for i in 1...20 { actor.run("PUSH blue note-\(i)") }
        let watcher = hub.connect()
        let lines = watcher.run("WATCH 0")
        XCTAssertEqual(lines.first, "CONTINUE 0")
        XCTAssertFalse(lines.contains { $0.hasPrefix("EVENT 20 ") }, "the replay was cut short")
        XCTAssertEqual(lines.last?.hasPrefix("STATE 20 "), true, "and the watcher was resynced: \(lines)")
        actor.run("POP")
        XCTAssertEqual(watcher.newLines().map { $0.hasPrefix("EVENT 21 pop ") }, [true], "events resume after the resync")
    }

    func test_watchAfter_inAnotherRoomAfterJoin_usesThatRoomsHistory() throws {
        let hub = try hub()
        let actor = hub.connect(), watcher = hub.connect()
        actor.run("JOIN lobby", "SELECT green", "SELECT blue")
        XCTAssertEqual(watcher.run("JOIN lobby", "WATCH 1"), ["STATE 2 /blue", "CONTINUE 1", "EVENT 2 select /blue"])
        XCTAssertEqual(watcher.run("JOIN main", "WATCH 1"), ["STATE 0 /red", "STATE 0 /red"], "main never reached 1")
    }
}
