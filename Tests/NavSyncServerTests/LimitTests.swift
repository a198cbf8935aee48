import XCTest
import NavSyncCore
@testable import NavSyncServer

/// --max-clients, --max-rooms, --max-depth and --max-line.
final class LimitTests: XCTestCase {
    func test_maxClients_extraConnectionGetsBusyThenCloseAfterSending() throws {
        let hub = try Hub(limits: limits(maxClients: 2))
        let a = hub.connect(), b = hub.connect()
        let third = hub.connect()
        XCTAssertEqual(third.connection.writes.count, 0, "nothing is written before the loop turn ends")
        hub.flush()
        XCTAssertEqual(third.connection.lines.count, 1)
        XCTAssertTrue(third.connection.lines[0].hasPrefix("ERR busy "), third.connection.lines[0])
        XCTAssertEqual(third.connection.calls, ["write", "closeAfterSending"])
        XCTAssertEqual(hub.server.connectionCount, 2)
        XCTAssertEqual(a.stats()["connections"], "2")

        // Whatever the refused client sends is ignored.
        third.send("SELECT green")
        hub.flush()
        XCTAssertEqual(third.connection.lines.count, 1)
        XCTAssertEqual(b.run("GET"), ["STATE 0 /red"])
    }

    func test_maxClients_slotFreedByCloseIsReused() throws {
        let hub = try Hub(limits: limits(maxClients: 2))
        let a = hub.connect()
        _ = hub.connect()
        a.run("QUIT")
        let c = hub.connect()
        XCTAssertEqual(c.run("PING"), ["PONG"])
        XCTAssertFalse(c.connection.isClosed)
        XCTAssertTrue(hub.logged("closed: client quit"))
    }

    func test_maxRooms_thirdRoomsFirstChangeIsLimit() throws {
        let hub = try Hub(limits: limits(maxRooms: 2))
        let client = hub.connect()
        XCTAssertEqual(client.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(client.run("JOIN two", "SELECT green"), ["STATE 0 /red", "OK 1"])
        let reply = client.run("JOIN three", "WATCH", "GET", "SELECT red", "SELECT green", "GET")
        XCTAssertEqual(reply.count, 6)
        XCTAssertEqual(Array(reply.prefix(4)), ["STATE 0 /red", "STATE 0 /red", "STATE 0 /red", "OK 0"])
        XCTAssertTrue(reply[4].hasPrefix("ERR limit "), reply[4])
        XCTAssertEqual(reply[5], "STATE 0 /red")
        // Rooms that already hold state keep changing (and the watch moved along).
        XCTAssertEqual(client.run("JOIN two", "SELECT blue"), ["STATE 1 /green", "OK 2", "EVENT 2 select /blue"])
        XCTAssertEqual(client.stats()["rooms"], "2")
    }

    func test_maxRooms_readingAndWatchingCreateNothing() throws {
        let hub = try Hub(limits: limits(maxRooms: 1))
        let watcher = hub.connect()
        for i in 0..<10 { watcher.run("JOIN idle\(i)", "WATCH", "GET", "STATS", "UNWATCH") }
        XCTAssertEqual(watcher.stats()["rooms"], "0")
        XCTAssertEqual(watcher.run("JOIN real", "PUSH blue"), ["STATE 0 /red", "OK 1"])
        XCTAssertTrue(watcher.run("JOIN idle0", "PUSH blue")[1].hasPrefix("ERR limit"))
    }

    func test_maxRooms_loadedRoomsCount() throws {
        let hub = try Hub(limits: limits(maxRooms: 1), rooms: ["old": RoomState(stack: stack("/green"), revision: 3)])
        let client = hub.connect()
        XCTAssertEqual(client.stats()["rooms"], "1")
        XCTAssertTrue(client.run("SELECT green")[0].hasPrefix("ERR limit"))
        XCTAssertEqual(client.run("JOIN old", "SELECT blue"), ["STATE 3 /green", "OK 4"])
    }

    func test_maxDepth_pushPastDepthIsLimit() throws {
        let hub = try Hub(limits: limits(maxDepth: 3))
        let watcher = hub.connect(), client = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(client.run("PUSH green", "PUSH blue"), ["OK 1", "OK 2"])
        let reply = client.run("PUSH red")
        XCTAssertTrue(reply[0].hasPrefix("ERR limit "), reply[0])
        XCTAssertEqual(client.run("GET"), ["STATE 2 /red/green/blue"])
        XCTAssertEqual(watcher.run().count, 2, "a refused change sends no event")
        XCTAssertTrue(client.run("OPEN /red/red/red/red")[0].hasPrefix("ERR limit "))
        XCTAssertEqual(client.run("OPEN /blue/blue/blue"), ["OK 3"])
    }

    func test_maxLine_longLineIsAnsweredAndConnectionStaysUsable() throws {
        let hub = try Hub(limits: limits(maxLine: 64))
        let client = hub.connect()
        client.sendRaw("PING " + String(repeating: "x", count: 100))
        hub.flush()
        let first = client.newLines()
        XCTAssertEqual(first.count, 1)
        XCTAssertTrue(first[0].hasPrefix("ERR line-too-long "), first[0])
        client.sendRaw(String(repeating: "y", count: 100) + "\nPING ok\n")
        hub.flush()
        XCTAssertEqual(client.newLines(), ["PONG ok"])
    }
}
