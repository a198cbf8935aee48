import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A watcher that stops reading loses intermediate events, never replies, and
/// gets one resync STATE once its transport drains.
final class SlowWatcherTests: XCTestCase {
    private let maxPending = 200

    func test_slowWatcher_dropsEventsThenResyncsOnceAndResumes() throws {
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), fast = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        fast.run("WATCH")

        actor.run("SELECT green")
        XCTAssertEqual(slow.newLines(), ["EVENT 1 select /green"])

        // The slow watcher's transport is backed up past the limit.
        slow.connection.queuedWriteBytes = maxPending + 1
        let writesWhileStuck = slow.connection.writes.count
        for i in 0..<30 { actor.run("PUSH blue n\(i)", "POP") }
        XCTAssertEqual(slow.connection.writes.count, writesWhileStuck, "nothing more is queued for it")
        XCTAssertEqual(slow.session.output.queue.count, 0)

        // Everybody else got every event.
        let fastEvents = fast.newLines()
        XCTAssertEqual(fastEvents.count, 61)
        XCTAssertEqual(fastEvents.last, "EVENT 61 pop /green")

        // Still backed up: no resync yet, even after a drained callback.
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), [])

        // Drained: exactly one STATE with the current state.
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), ["STATE 61 /green"])
        hub.flush()
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), [], "the resync is sent once")

        // Events resume after it.
        actor.run("SELECT blue")
        XCTAssertEqual(slow.newLines(), ["EVENT 62 select /blue"])
        XCTAssertEqual(fast.newLines(), ["EVENT 62 select /blue"])
        XCTAssertEqual(actor.stats()["resyncs"], "1")
    }

    func test_slowWatcher_ownRepliesAreNeverDropped() throws {
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        slow.connection.queuedWriteBytes = 10 * maxPending

        // Its own change: OK is kept, its own event is dropped.
        slow.send("SELECT green")
        actor.send("PUSH blue")
        slow.send("GET", "PING still here", "POP", "IF 0 ROOT")
        for _ in 0..<20 { slow.send("SCREENS") }
        hub.flush()
        // Over --max-pending nothing it sent runs: its lines wait, unanswered
        // and unlost, while the other client goes on.
        XCTAssertEqual(slow.newLines(), [])
        XCTAssertEqual(actor.run("GET"), ["OK 1", "STATE 1 /red/blue"])

        // Each time its socket drains, lines run until the bound is passed again.
        var lines: [String] = []
        for _ in 0..<50 where lines.filter({ $0 == "END" }).count < 20 {
            slow.connection.queuedWriteBytes = 0
            slow.writeQueueDrained()
            hub.flush()
            lines += slow.newLines()
        }
        XCTAssertEqual(Array(lines.prefix(5)), ["OK 2", "STATE 2 /green", "PONG still here",
                                                "ERR at-root the stack has only its root entry", "ERR conflict current=2"])
        XCTAssertEqual(lines.filter { $0 == "END" }.count, 20)
        XCTAssertFalse(lines.contains { $0.hasPrefix("EVENT") }, "its events were dropped")
        XCTAssertEqual(lines.filter { $0 == "STATE 2 /green" }.count, 2, "the GET, then one resync")
    }

    func test_slowWatcher_outboxAloneOverLimitResyncsAtFlush() throws {
        // Room for the actor's own 80 replies in one turn, not for the watcher's 80 events.
        let hub = try Hub(limits: limits(maxPending: 1_500))
        let watcher = hub.connect(), actor = hub.connect()
        watcher.run("WATCH")
        // Many events in one loop turn, none written yet: the outbox passes the limit.
        for i in 0..<40 { actor.send("PUSH blue event\(i)", "POP") }
        hub.flush()
        let lines = watcher.newLines()
        XCTAssertEqual(lines.last, "STATE 80 /red")
        XCTAssertEqual(lines.filter { $0.hasPrefix("STATE") }.count, 1)
        // Whatever events it kept form a gap-free prefix.
        let revisions = lines.dropLast().map { UInt64($0.split(separator: " ")[1])! }
        XCTAssertEqual(revisions, revisions.isEmpty ? [] : Array(1...UInt64(revisions.count)))
        XCTAssertLessThan(revisions.count, 80)
        actor.run("SELECT green")
        XCTAssertEqual(watcher.newLines(), ["EVENT 81 select /green"])
    }

    func test_slowWatcher_resyncCountedInStatsWhenItsStateIsSent() throws {
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        XCTAssertEqual(actor.stats()["resyncs"], "0")
        slow.connection.queuedWriteBytes = maxPending + 1
        actor.run("SELECT green", "SELECT blue")
        XCTAssertEqual(actor.stats()["resyncs"], "0", "owed, not sent yet")
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines().last, "STATE 2 /blue")
        XCTAssertEqual(actor.stats()["resyncs"], "1", "one resync per fall-behind, not per dropped event")
        slow.connection.queuedWriteBytes = maxPending + 1
        actor.run("SELECT red")
        // A resync owed but settled by the watcher's own WATCH is never sent.
        slow.run("WATCH")
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(actor.stats()["resyncs"], "1")
    }

    func test_slowWatcher_watchAgainSettlesTheResync() throws {
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        slow.connection.queuedWriteBytes = maxPending + 1
        actor.run("SELECT green")
        XCTAssertEqual(slow.run("WATCH"), [], "run once its output drains")
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), ["STATE 1 /green"], "the WATCH reply is the fresh snapshot, no resync besides")
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), [])
        actor.run("SELECT blue")
        XCTAssertEqual(slow.newLines(), ["EVENT 2 select /blue"])
    }

    func test_slowWatcher_unwatchedWhileOwedGetsNoResync() throws {
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        slow.connection.queuedWriteBytes = maxPending + 1
        actor.run("SELECT green")
        XCTAssertEqual(slow.run("UNWATCH"), [], "run once its output drains")
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), ["OK 1"], "and no resync after it")
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), [])
    }
}
