import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Events reach every watcher of a room, in revision order and without gaps.
final class BroadcastTests: XCTestCase {
    /// Deterministic mutations over the built-in catalog; some are no-ops or
    /// refused, which must not show up as events.
    private static let script = [
        "SELECT green", "PUSH blue hello world", "PUSH red", "POP", "NEXT", "ROOT",
        "SELECT green", "NEXT note", "PUSH green", "OPEN /red/green/blue:x%20y", "POP", "POP",
        "POP", "SELECT blue", "NEXT", "NEXT", "NEXT",
    ]

    func test_broadcast_watchersSeeIdenticalGapFreeStreams() throws {
        let hub = try Hub()
        let watchers = (0..<4).map { _ in hub.connect() }
        for w in watchers { XCTAssertEqual(w.run("WATCH"), ["STATE 0 /red"]) }
        let actor = hub.connect()

        var expectedRevision: UInt64 = 0
        for round in 0..<10 {
            for line in Self.script {
                let reply = actor.run(line)
                XCTAssertEqual(reply.count, 1, "\(round) \(line): \(reply)")
                if reply.first == "OK \(expectedRevision + 1)" { expectedRevision += 1 }
            }
        }
        XCTAssertGreaterThan(expectedRevision, 100)

        let streams = watchers.map { $0.newLines() }
        for stream in streams.dropFirst() { XCTAssertEqual(stream, streams[0]) }
        let revisions = streams[0].map { line -> UInt64 in
            XCTAssertTrue(line.hasPrefix("EVENT "), line)
            return UInt64(line.split(separator: " ")[1])!
        }
        XCTAssertEqual(revisions, Array(1...expectedRevision))
        // The last event names the room's current state.
        let current = actor.run("GET")[0]
        let last = streams[0].last!.split(separator: " ")
        XCTAssertEqual(current, "STATE \(last[1]) \(last[3])")
    }

    func test_broadcast_eventNamesOpAndWholeRoute() throws {
        let hub = try Hub()
        let a = hub.connect(), b = hub.connect()
        XCTAssertEqual(a.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(b.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(b.run("PUSH blue hello world"), ["OK 2"])
        XCTAssertEqual(a.run("POP"), ["EVENT 1 select /green", "EVENT 2 push /green/blue:hello%20world", "OK 3", "EVENT 3 pop /green"])
        XCTAssertEqual(b.run("IF 2 SELECT red"), ["ERR conflict current=3"])
        XCTAssertEqual(b.run("GET"), ["STATE 3 /green"])
        XCTAssertEqual(a.run("ROOT", "NEXT", "OPEN /red/blue:a"), ["OK 3", "OK 4", "EVENT 4 next /blue", "OK 5", "EVENT 5 open /red/blue:a"])
    }

    func test_hub_ownOkBeforeOwnEvent() throws {
        let hub = try Hub()
        let actor = hub.connect()
        XCTAssertEqual(actor.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(actor.run("SELECT green", "PUSH blue", "GET"),
                       ["OK 1", "EVENT 1 select /green", "OK 2", "EVENT 2 push /green/blue", "STATE 2 /green/blue"])
    }

    func test_flush_writesOneBatchPerConnectionWithLinesInOrder() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        actor.run("WATCH")
        let writesBefore = (watcher.connection.writes.count, actor.connection.writes.count)

        actor.send("SELECT green", "PING one", "PUSH blue", "POP", "GET")
        // Nothing leaves before the loop turn ends.
        XCTAssertEqual(watcher.connection.writes.count, writesBefore.0)
        XCTAssertEqual(actor.connection.writes.count, writesBefore.1)
        hub.flush()

        XCTAssertEqual(watcher.connection.writes.count, writesBefore.0 + 1)
        XCTAssertEqual(actor.connection.writes.count, writesBefore.1 + 1)
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 select /green", "EVENT 2 push /green/blue", "EVENT 3 pop /green"])
        XCTAssertEqual(actor.newLines(), ["OK 1", "EVENT 1 select /green", "PONG one", "OK 2", "EVENT 2 push /green/blue",
                                          "OK 3", "EVENT 3 pop /green", "STATE 3 /green"])
        // A flush with nothing queued writes nothing.
        hub.flush()
        XCTAssertEqual(watcher.connection.writes.count, writesBefore.0 + 1)
        XCTAssertEqual(actor.connection.writes.count, writesBefore.1 + 1)
    }

    func test_broadcast_sharesOneEventBufferAcrossWatchers() throws {
        let hub = try Hub()
        let watchers = (0..<3).map { _ in hub.connect() }
        for w in watchers { w.run("WATCH") }
        let actor = hub.connect()
        actor.run("PUSH blue shared bytes")

        let chunks = watchers.map { $0.connection.writes.last! }
        for batch in chunks { XCTAssertEqual(batch, [Array("EVENT 1 push /red/blue:shared%20bytes\n".utf8)]) }
        let shared = watchers.map { ObjectIdentifier($0.connection.sharedWrites.last!) }
        XCTAssertEqual(Set(shared).count, 1, "every watcher should be handed the same event buffer")
    }

    func test_broadcast_countsEventsOut() throws {
        let hub = try Hub()
        let w1 = hub.connect(), w2 = hub.connect()
        w1.run("WATCH")
        w2.run("WATCH")
        w1.run("SELECT green", "SELECT blue")
        XCTAssertEqual(w1.stats()["events_out"], "4")
    }
}
