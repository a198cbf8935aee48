import XCTest
import NavSyncCore
@testable import NavSyncServer

/// STATS, HELLO, SCREENS, HELP and PING: the read-only commands.
final class StatsTests: XCTestCase {
    func test_stats_listsTheContractKeysThenEnd() throws {
        let hub = try Hub(limits: limits(maxClients: 50))
        hub.clock = 42
        let client = hub.connect()
        let lines = client.run("STATS")
        XCTAssertEqual(lines.last, "END")
        XCTAssertTrue(lines.dropLast().allSatisfy { $0.hasPrefix("STAT ") && $0.split(separator: " ").count >= 3 }, "\(lines)")
        let keys = lines.dropLast().map { String($0.split(separator: " ")[1]) }
        for key in ["version", "uptime_s", "connections", "watchers", "watchers_total", "rooms", "rev", "events_out", "resyncs"] {
            XCTAssertTrue(keys.contains(key), "missing \(key)")
        }
        XCTAssertEqual(Set(keys).count, keys.count, "no key twice")
        let figures = Dictionary(uniqueKeysWithValues: lines.dropLast().map { line -> (String, String) in
            let parts = line.split(separator: " ", maxSplits: 2)
            return (String(parts[1]), String(parts[2]))
        })
        XCTAssertEqual(figures["version"], "9.9.9-test")
        XCTAssertEqual(figures["uptime_s"], "42")
        XCTAssertEqual(figures["connections"], "1")
        XCTAssertEqual(figures["max_clients"], "50")
        XCTAssertEqual(figures["persistence"], "none")
    }

    func test_stats_figuresFollowTheRoom() throws {
        let hub = try Hub(persistence: .batch)
        let a = hub.connect(), b = hub.connect(), c = hub.connect()
        a.run("WATCH")
        b.run("JOIN side", "WATCH", "SELECT green", "SELECT blue")
        c.run("PUSH blue")
        var figures = a.stats()
        XCTAssertEqual(figures["connections"], "3")
        XCTAssertEqual(figures["watchers"], "1")
        XCTAssertEqual(figures["watchers_total"], "2")
        XCTAssertEqual(figures["rooms"], "2")
        XCTAssertEqual(figures["rev"], "1")
        XCTAssertEqual(figures["room"], "main")
        XCTAssertEqual(figures["persistence"], "journal")
        XCTAssertEqual(figures["events_out"], "3")
        figures = b.stats()
        XCTAssertEqual(figures["rev"], "2")
        XCTAssertEqual(figures["room"], "side")
    }

    func test_rooms_listsRoomsWithStateByName_untouchedRoomsNot() throws {
        let hub = try Hub(persistence: .batch)
        let a = hub.connect(), b = hub.connect()
        XCTAssertEqual(a.run("ROOMS"), ["END"], "nothing changed yet")
        b.run("JOIN zeta", "PUSH blue x y", "JOIN alpha", "SELECT green", "JOIN watched-only", "WATCH")
        a.run("JOIN also-untouched", "GET")
        XCTAssertEqual(a.run("ROOMS"), ["ROOM alpha 1 /green", "ROOM zeta 1 /red/blue:x%20y", "END"])
    }

    func test_readOnlyCommands_answerAsDocumented() throws {
        let hub = try Hub()
        let client = hub.connect()
        XCTAssertEqual(client.run("HELLO"), ["HELLO navsync 1 9.9.9-test"])
        XCTAssertTrue(client.run("HELLO 2")[0].hasPrefix("ERR bad-args"))
        XCTAssertEqual(client.run("PING", "ping  two words  "), ["PONG", "PONG two words"])
        XCTAssertEqual(client.run("SCREENS"), ["SCREEN red red green none Red", "SCREEN green green blue none Green",
                                               "SCREEN blue blue red optional Blue", "END"])
        let help = client.run("HELP")
        XCTAssertEqual(help.last, "END")
        XCTAssertGreaterThan(help.count, 5)
        XCTAssertEqual(client.run("", "   \t ", "GET"), ["STATE 0 /red"], "blank lines get no reply")
        XCTAssertTrue(client.run("FLY")[0].hasPrefix("ERR unknown-command"))
        XCTAssertTrue(client.run("JOIN bad/name")[0].hasPrefix("ERR bad-args"))
        hub.server.receive([0x50, 0x49, 0x4E, 0x47, 0x20, 0xFF, 0x0A], from: client.session)
        hub.flush()
        XCTAssertTrue(client.newLines().first?.hasPrefix("ERR bad-encoding") ?? false)
        XCTAssertEqual(client.stats()["commands"], "11", "blank lines are not commands; refused ones are")
    }
}

/// Every STATS figure against a workload whose answer is known in advance
/// (docs/PROTOCOL.md, "STATS reports").
final class StatsMeaningTests: XCTestCase {
    func test_everyFigure_meansWhatTheProtocolSays() throws {
        let maxPending = 4096
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let a = hub.connect(), b = hub.connect(), c = hub.connect()
        a.run("WATCH")                                   // command 1
        b.run("JOIN side", "WATCH")                      // 2, 3
        c.run("PUSH blue")                               // 4: change 1 of main, one event (a)
        c.run("SELECT red")                              // 5: change 2, one event
        c.run("SELECT red")                              // 6: a no-op, not a change
        c.run("POP")                                     // 7: ERR at-root, counted, not a change
        c.run("FLY")                                     // 8: ERR unknown-command, counted
        c.run("", "  ")                                  // blank lines are not commands
        c.run("IF 9 PUSH blue")                          // 9: ERR conflict
        // a stops reading: the event of change 3 is dropped for it, so not counted out.
        a.connection.queuedWriteBytes = maxPending + 1
        c.run("PUSH green")                              // 10: change 3
        var figures = c.stats()                          // 11
        XCTAssertEqual(figures["connections"], "3")
        XCTAssertEqual(figures["watchers"], "1", "a, in main")
        XCTAssertEqual(figures["watchers_total"], "2")
        XCTAssertEqual(figures["rooms"], "1", "side was joined and watched, never changed")
        XCTAssertEqual(figures["rev"], "3")
        XCTAssertEqual(figures["commands"], "11")
        XCTAssertEqual(figures["changes"], "3")
        XCTAssertEqual(figures["events_out"], "2")
        XCTAssertEqual(figures["resyncs"], "0", "owed to a, not sent yet")

        // a drains: its resync STATE goes out and is counted.
        a.connection.queuedWriteBytes = 0
        a.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(a.newLines().last, "STATE 3 /red/green")
        figures = b.stats()                              // 12, from side
        XCTAssertEqual(figures["resyncs"], "1")
        XCTAssertEqual(figures["watchers"], "1", "b, in side")
        XCTAssertEqual(figures["rev"], "0")
        XCTAssertEqual(figures["commands"], "12")
        c.run("QUIT")                                    // 13
        XCTAssertEqual(b.stats()["connections"], "2")    // 14
    }
}
