import XCTest
import NavSyncCore
@testable import NavSyncServer

/// How sessions end: QUIT, end of input, transport failure, shutdown.
final class LifecycleTests: XCTestCase {
    func test_quit_byeThenCloseAfterSending() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.send("GET", "QUIT", "SELECT green")
        XCTAssertEqual(client.connection.calls, [], "nothing happens before the flush")
        hub.flush()
        XCTAssertEqual(client.connection.lines, ["STATE 0 /red", "BYE"])
        XCTAssertEqual(client.connection.calls, ["write", "closeAfterSending"])
        XCTAssertEqual(hub.server.connectionCount, 0)
        XCTAssertEqual(hub.server.roomStates, [:], "lines after QUIT are not run")

        // Late input and callbacks after the end are ignored.
        client.send("SELECT green")
        client.inputEnded()
        client.writeQueueDrained()
        client.transportFailed()
        hub.flush()
        XCTAssertEqual(client.connection.calls, ["write", "closeAfterSending"])
    }

    func test_inputEnded_nonWatcherGetsRepliesThenCloses() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.send("SELECT green", "GET")
        client.inputEnded()
        XCTAssertEqual(client.connection.calls, [])
        hub.flush()
        XCTAssertEqual(client.connection.lines, ["OK 1", "STATE 1 /green"])
        XCTAssertEqual(client.connection.calls, ["write", "closeAfterSending"])
        XCTAssertEqual(hub.server.connectionCount, 0)
        XCTAssertTrue(hub.logged("closed: peer closed"))
    }

    func test_inputEnded_unterminatedLastLineStillRuns() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.sendRaw("SELECT green\nPUSH blue last words")
        hub.flush()
        XCTAssertEqual(client.newLines(), ["OK 1"])
        client.inputEnded()
        hub.flush()
        XCTAssertEqual(client.newLines(), ["OK 2"])
        XCTAssertEqual(hub.server.roomStates["main"]?.route, "/green/blue:last%20words")
        XCTAssertEqual(client.connection.calls.last, "closeAfterSending")
    }

    func test_inputEnded_unterminatedCarriageReturnLineRuns() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.sendRaw("PING x\r")
        client.inputEnded()
        hub.flush()
        XCTAssertEqual(client.connection.lines, ["PONG x"])
    }

    func test_inputEnded_unterminatedQuitClosesOnce() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.sendRaw("QUIT")
        client.inputEnded()
        hub.flush()
        XCTAssertEqual(client.connection.lines, ["BYE"])
        XCTAssertEqual(client.connection.calls, ["write", "closeAfterSending"])
    }

    func test_inputEnded_watcherIsAnsweredThenClosed() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.send("WATCH")
        XCTAssertEqual(actor.stats()["watchers"], "1")
        watcher.inputEnded()
        hub.flush()
        XCTAssertEqual(actor.stats()["watchers"], "0", "it stops counting in the same loop turn")
        XCTAssertEqual(watcher.newLines(), ["STATE 0 /red"])
        XCTAssertEqual(watcher.connection.calls.last, "closeAfterSending")
        actor.run("SELECT green")
        XCTAssertEqual(watcher.newLines(), [])
        XCTAssertTrue(hub.logged("peer closed"))
    }

    func test_inputEnded_unterminatedWatchIsAnsweredThenClosed() throws {
        let hub = try Hub()
        let watcher = hub.connect()
        watcher.sendRaw("WATCH")
        watcher.inputEnded()
        hub.flush()
        XCTAssertEqual(watcher.newLines(), ["STATE 0 /red"])
        XCTAssertTrue(watcher.connection.isClosed)
    }

    func test_inputEnded_continueAndItsEventsAreTheAnswer_laterLiveEventsAreNot() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        actor.run("SELECT green", "SELECT blue")
        // One turn: the resume, then a live change, then the end of input.
        watcher.send("WATCH 0")
        actor.send("SELECT red")
        watcher.inputEnded()
        hub.flush()
        XCTAssertEqual(watcher.newLines(), ["CONTINUE 0", "EVENT 1 select /green", "EVENT 2 select /blue"])
        XCTAssertTrue(watcher.connection.isClosed)
    }

    func test_inputEnded_eventsBeforeTheLastAnswerStillGoOut() throws {
        let hub = try Hub()
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        actor.send("SELECT green")
        watcher.send("PING last")
        watcher.inputEnded()
        hub.flush()
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 select /green", "PONG last"])
    }

    func test_transportFailed_detachesAndDropsOutput() throws {
        let hub = try Hub()
        let watchers = (0..<3).map { _ in hub.connect() }
        for w in watchers { w.run("WATCH") }
        let actor = hub.connect()
        XCTAssertEqual(actor.stats()["watchers_total"], "3")

        watchers[0].send("GET")
        actor.send("SELECT green")
        watchers[0].transportFailed()
        hub.flush()
        XCTAssertEqual(watchers[0].connection.calls, ["write", "close"], "queued output is dropped; closed at once")
        XCTAssertEqual(watchers[0].connection.lines, ["STATE 0 /red"])
        XCTAssertEqual(watchers[1].newLines(), ["EVENT 1 select /green"])

        let figures = actor.stats()
        XCTAssertEqual(figures["watchers_total"], "2")
        XCTAssertEqual(figures["watchers"], "2")
        XCTAssertEqual(figures["connections"], "3")
        actor.run("SELECT blue")
        XCTAssertEqual(watchers[0].connection.lines, ["STATE 0 /red"], "nothing is queued after the failure")
        XCTAssertEqual(watchers[2].newLines(), ["EVENT 1 select /green", "EVENT 2 select /blue"])
    }

    func test_transportFailed_whileClosingStillCloses() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.send("QUIT")
        client.transportFailed()
        hub.flush()
        XCTAssertEqual(client.connection.calls, ["close"])
        XCTAssertTrue(hub.logged("closed: client quit"))
        XCTAssertEqual(hub.server.connectionCount, 0)
    }

    func test_shutdown_saysByeToEveryoneAndClosesGracefully() throws {
        let hub = try Hub(persistence: .batch)
        let a = hub.connect(), b = hub.connect()
        b.run("WATCH")
        a.send("SELECT green")
        hub.server.shutdown()
        XCTAssertEqual(a.newLines(), ["OK 1", "BYE"])
        XCTAssertEqual(b.newLines(), ["EVENT 1 select /green", "BYE"])
        for c in [a, b] { XCTAssertEqual(c.connection.calls.last, "closeAfterSending") }
        XCTAssertEqual(hub.storage!.syncs, 1, "batched appends are made durable")
        XCTAssertEqual(hub.server.connectionCount, 0)
        XCTAssertTrue(hub.logged("daemon shutting down"))
    }
}
