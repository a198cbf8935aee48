import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Rooms: the no-op rule, isolation, JOIN and WATCH.
final class RoomTests: XCTestCase {
    func test_noop_selectOnFreshRoomIsOkZeroWithoutEvent() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(actor.run("SELECT red"), ["OK 0"])
        XCTAssertEqual(actor.run("ROOT"), ["OK 0"])
        XCTAssertEqual(watcher.run(), [])
        XCTAssertEqual(actor.stats()["rooms"], "0")
        XCTAssertEqual(hub.server.roomStates, [:])
    }

    func test_noop_sameStackKeepsRevision() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(actor.run("PUSH blue hi"), ["OK 1"])
        XCTAssertEqual(actor.run("OPEN /red/blue:hi", "OPEN /red/blue:%68i", "PUSH green", "POP"), ["OK 1", "OK 1", "OK 2", "OK 3"])
        XCTAssertEqual(watcher.run(), ["EVENT 1 push /red/blue:hi", "EVENT 2 push /red/blue:hi/green", "EVENT 3 pop /red/blue:hi"])
        XCTAssertEqual(actor.stats()["rooms"], "1")
    }

    func test_rooms_eventsDoNotCrossRooms() throws {
        let hub = try Hub()
        let mainWatcher = hub.connect(), otherWatcher = hub.connect(), actor = hub.connect()
        mainWatcher.run("WATCH")
        XCTAssertEqual(otherWatcher.run("JOIN other", "WATCH"), ["STATE 0 /red", "STATE 0 /red"])
        XCTAssertEqual(actor.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(actor.run("JOIN other", "PUSH blue"), ["STATE 0 /red", "OK 1"])

        XCTAssertEqual(mainWatcher.run(), ["EVENT 1 select /green"])
        XCTAssertEqual(otherWatcher.run(), ["EVENT 1 push /red/blue"])
        XCTAssertEqual(mainWatcher.run("GET"), ["STATE 1 /green"])
        XCTAssertEqual(otherWatcher.run("GET"), ["STATE 1 /red/blue"])
        XCTAssertEqual(actor.stats()["rooms"], "2")
    }

    func test_join_keepsWatchForTheNewRoom() throws {
        let hub = try Hub()
        let watcher = hub.connect(), mainActor = hub.connect(), otherActor = hub.connect()
        otherActor.run("JOIN other", "SELECT blue")
        XCTAssertEqual(watcher.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(watcher.run("JOIN other"), ["STATE 1 /blue"])
        mainActor.run("SELECT green")
        otherActor.run("PUSH green")
        XCTAssertEqual(watcher.run(), ["EVENT 2 push /blue/green"])
        let figures = watcher.stats()
        XCTAssertEqual(figures["watchers"], "1")
        XCTAssertEqual(figures["watchers_total"], "1")
        XCTAssertEqual(figures["room"], "other")
        XCTAssertEqual(mainActor.stats()["watchers"], "0")
    }

    func test_join_withoutWatchGetsNoEvents() throws {
        let hub = try Hub()
        let client = hub.connect(), actor = hub.connect()
        XCTAssertEqual(client.run("JOIN other"), ["STATE 0 /red"])
        actor.run("JOIN other", "SELECT green")
        XCTAssertEqual(client.run(), [])
        XCTAssertEqual(client.run("GET"), ["STATE 1 /green"])
    }

    func test_join_sameRoomAnswersState() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(watcher.run("JOIN main"), ["STATE 0 /red"])
        actor.run("SELECT green")
        XCTAssertEqual(watcher.run(), ["EVENT 1 select /green"])
        XCTAssertEqual(watcher.stats()["watchers_total"], "1")
    }

    func test_unwatch_stopsEvents() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        actor.run("SELECT green")
        XCTAssertEqual(watcher.run("UNWATCH"), ["EVENT 1 select /green", "OK 1"])
        actor.run("SELECT blue")
        XCTAssertEqual(watcher.run(), [])
        XCTAssertEqual(watcher.run("UNWATCH"), ["OK 2"], "UNWATCH when not watching is harmless")
        XCTAssertEqual(watcher.stats()["watchers_total"], "0")
    }

    func test_watch_againAnswersFreshStateAndDoesNotDoubleEvents() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        actor.run("SELECT green")
        XCTAssertEqual(watcher.run("WATCH"), ["EVENT 1 select /green", "STATE 1 /green"])
        actor.run("SELECT blue")
        XCTAssertEqual(watcher.run(), ["EVENT 2 select /blue"])
        XCTAssertEqual(watcher.stats()["watchers_total"], "1")
        watcher.run("UNWATCH")
        actor.run("SELECT red")
        XCTAssertEqual(watcher.run("WATCH"), ["STATE 3 /red"])
    }

    func test_join_untouchedRoomsLeaveNothingBehind() throws {
        let hub = try Hub()
        let client = hub.connect()
        for i in 0..<500 { client.send("JOIN room\(i)", "GET") }
        client.send("WATCH")
        for i in 0..<500 { client.send("JOIN watched\(i)") }
        hub.flush()
        XCTAssertEqual(client.newLines().count, 1501)
        XCTAssertEqual(client.stats()["rooms"], "0")
        // Only the room the client is in is held, for its watch.
        XCTAssertEqual(Array(hub.server.rooms.heldNames), ["watched499"])
        client.run("UNWATCH", "JOIN main")
        XCTAssertLessThanOrEqual(hub.server.rooms.heldCount, 1)
    }
}
