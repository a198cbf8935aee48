import NavSyncCore
@testable import NavSyncServer
import XCTest

/// The room table alone: what it keeps, what it drops, and that its counts
/// follow every path that adds or removes.
final class RoomRegistryTests: XCTestCase {
    private let limits = Limits()
    private let start = [RouteEntry(screen: "red")]

    private func registry(_ states: [String: RoomState] = [:]) -> RoomRegistry {
        RoomRegistry(states: states, initialStack: start, limits: limits)
    }

    private func watcher(_ id: Int) -> Session {
        Session(id: id, connection: MemoryConnection(), grant: .unrestricted, maxLineBytes: 1024, liveCount: LiveCount())
    }

    func test_registry_unchangedRoomReadsAsInitialStackAtZero() {
        let rooms = registry()
        XCTAssertEqual(rooms.state(of: "never"), RoomState(stack: start, revision: 0))
        XCTAssertNil(rooms.storedState(of: "never"))
        XCTAssertEqual(rooms.heldCount, 0, "reading a room does not make it")
    }

    func test_registry_loadedStatesCountAsChanged() {
        let rooms = registry(["a": RoomState(stack: start, revision: 4), "b": RoomState(stack: start, revision: 1)])
        XCTAssertEqual(rooms.changedCount, 2)
        XCTAssertEqual(rooms.state(of: "a").revision, 4)
        XCTAssertEqual(rooms.changedRoomsByName().map(\.name), ["a", "b"])
    }

    func test_registry_setStateKeepsChangedCountBothWays() {
        let rooms = registry()
        rooms.setState(RoomState(stack: start, revision: 1), of: "x")
        rooms.setState(RoomState(stack: start, revision: 2), of: "x")
        XCTAssertEqual(rooms.changedCount, 1, "a second change of one room is not a second room")
        rooms.setState(nil, of: "x")
        XCTAssertEqual(rooms.changedCount, 0)
        XCTAssertNil(rooms.setState(nil, of: "not-held"), "clearing a room not held makes nothing")
        XCTAssertEqual(rooms.heldCount, 1, "x is held until someone drops it when idle")
        rooms.dropIfIdle("x")
        XCTAssertEqual(rooms.heldCount, 0)
    }

    func test_registry_lastWatcherLeavingDropsUnchangedRoom() {
        let rooms = registry()
        let (one, two) = (watcher(1), watcher(2))
        let room = rooms.addWatcher(one, to: "lobby")
        XCTAssertTrue(rooms.addWatcher(two, to: "lobby") === room)
        XCTAssertEqual(rooms.watchersTotal, 2)
        XCTAssertEqual(rooms.watcherCount(of: "lobby"), 2)
        rooms.removeWatcher(one, from: "lobby")
        XCTAssertEqual(rooms.heldNames, ["lobby"])
        rooms.removeWatcher(two, from: "lobby")
        XCTAssertEqual(rooms.watchersTotal, 0)
        XCTAssertEqual(rooms.heldCount, 0, "an unchanged room nobody watches is forgotten")
    }

    func test_registry_changedRoomStaysWithoutWatchers() {
        let rooms = registry()
        let one = watcher(1)
        _ = rooms.addWatcher(one, to: "kept")
        rooms.setState(RoomState(stack: start, revision: 1), of: "kept")
        rooms.removeWatcher(one, from: "kept")
        XCTAssertEqual(rooms.heldNames, ["kept"])
        rooms.dropIdleRooms()
        XCTAssertEqual(rooms.heldNames, ["kept"], "a changed room is not idle")
    }

    func test_registry_dropIdleRoomsKeepsWatchedOnes() {
        let rooms = registry()
        _ = rooms.room(named: "empty")
        _ = rooms.addWatcher(watcher(1), to: "watched")
        rooms.dropIdleRooms()
        XCTAssertEqual(rooms.heldNames, ["watched"])
    }
}
