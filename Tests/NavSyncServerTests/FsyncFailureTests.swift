import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A failed fsync under `--fsync batch`: the changes it was to make durable
/// are refused (`ERR internal`), nothing of them is broadcast, the rooms are
/// as before in memory too, and every change is refused until the state file
/// has been rewritten and fsynced again.
final class FsyncFailureTests: XCTestCase {
    func test_failedBatchFsync_refusesTheTurnsChanges_broadcastsNothing_restoresState() throws {
        let hub = try Hub(persistence: .batch)
        let storage = hub.storage!
        let actor = hub.connect(), other = hub.connect(), watcher = hub.connect()
        XCTAssertEqual(watcher.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(actor.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(watcher.run(), ["EVENT 1 select /green"])
        let before = actor.stats()

        // A broken disk: fsync fails, and so does the rewrite (it fsyncs too).
        storage.failSync = true
        storage.failReplace = true
        actor.send("PUSH blue", "PUSH red")
        other.send("JOIN side", "SELECT blue")
        hub.flush()
        XCTAssertEqual(actor.newLines().map { String($0.prefix(13)) }, ["ERR internal ", "ERR internal "])
        XCTAssertEqual(other.newLines().map { String($0.prefix(13)) }, ["STATE 0 /red", "ERR internal "])
        XCTAssertEqual(watcher.newLines(), [], "nothing broadcast for refused changes")
        XCTAssertTrue(hub.logged("fsync of the state file failed"))
        XCTAssertEqual(hub.server.roomStates, ["main": RoomState(stack: stack("/green"), revision: 1)],
                       "in memory as before; the new room is gone")
        let after = actor.stats()
        for key in ["rev", "rooms", "changes", "events_out", "watchers_total"] {
            XCTAssertEqual(after[key], before[key], key)
        }

        // Still failing: every change is refused, and nothing is appended.
        let appends = storage.appends
        XCTAssertTrue(actor.run("PUSH blue")[0].hasPrefix("ERR internal "))
        XCTAssertEqual(storage.appends, appends)
        XCTAssertEqual(other.run("GET"), ["STATE 0 /red"])

        // The disk is back: the next change rewrites the file, then goes ahead.
        storage.failSync = false
        storage.failReplace = false
        XCTAssertEqual(actor.run("PUSH blue"), ["OK 2"])
        XCTAssertEqual(watcher.run(), ["EVENT 2 push /green/blue"])
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms, ["main": RoomState(stack: stack("/green/blue"), revision: 2)])
    }

    func test_failedBatchFsync_watcherMakingTheChangeGetsNeitherItsEventNorAnOK() throws {
        let hub = try Hub(persistence: .batch)
        let watcher = hub.connect(), second = hub.connect()
        XCTAssertEqual(watcher.run("WATCH"), ["STATE 0 /red"])
        second.run("WATCH")
        hub.storage!.failSync = true
        hub.storage!.failReplace = true
        // The watcher's second change takes the event of its first into its
        // outbox ahead of its OK; both must go.
        watcher.send("SELECT green", "PUSH blue")
        hub.flush()
        XCTAssertEqual(watcher.newLines().map { String($0.prefix(13)) }, ["ERR internal ", "ERR internal "])
        XCTAssertEqual(second.newLines(), [])
        XCTAssertEqual(watcher.stats()["events_out"], "0")
    }

    func test_readAfterUnsyncedChange_fsyncsFirst_andSeesOnlyDurableState() throws {
        let hub = try Hub(persistence: .batch)
        let storage = hub.storage!
        let actor = hub.connect(), reader = hub.connect()
        actor.send("SELECT green")
        XCTAssertEqual(storage.syncs, 0)
        reader.send("GET")
        XCTAssertEqual(storage.syncs, 1, "a GET after an unsynced change waits for its fsync")
        hub.flush()
        XCTAssertEqual(reader.newLines(), ["STATE 1 /green"])
        XCTAssertEqual(storage.syncs, 1, "nothing left to fsync at the end of the turn")
        XCTAssertEqual(actor.newLines(), ["OK 1"])

        // The same with the fsync failing: the reader sees the state as it
        // was (and IF is judged on it), and the change is refused.
        actor.send("PUSH blue")
        storage.failSync = true
        storage.failReplace = true
        reader.send("GET", "IF 2 POP")
        hub.flush()
        XCTAssertEqual(reader.newLines(), ["STATE 1 /green", "ERR conflict current=1"])
        let refused = actor.newLines()
        XCTAssertEqual(refused.count, 1)
        XCTAssertTrue(refused.first?.hasPrefix("ERR internal ") ?? false, "\(refused)")
    }

    func test_conflictAndNoOpAfterUnsyncedChange_fsyncFirst() throws {
        let hub = try Hub(persistence: .batch)
        let storage = hub.storage!
        let actor = hub.connect(), other = hub.connect()
        actor.send("SELECT green")
        other.send("IF 0 SELECT blue")
        XCTAssertEqual(storage.syncs, 1)
        other.send("SELECT green")
        hub.flush()
        XCTAssertEqual(other.newLines(), ["ERR conflict current=1", "OK 1"])
        XCTAssertEqual(actor.newLines(), ["OK 1"])
    }

    func test_failedBatchFsync_firstChangeOfRoom_roomNotCounted() throws {
        let hub = try Hub(limits: limits(maxRooms: 1), persistence: .batch)
        let client = hub.connect()
        hub.storage!.failSync = true
        XCTAssertTrue(client.run("SELECT green")[0].hasPrefix("ERR internal "))
        XCTAssertEqual(client.stats()["rooms"], "0")
        hub.storage!.failSync = false
        hub.flush()
        XCTAssertEqual(client.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(client.stats()["rooms"], "1")
    }

    func test_failedAlwaysFsync_refusedUntilRewritten_nothingBroadcast() throws {
        let hub = try Hub(persistence: .always)
        let storage = hub.storage!
        let actor = hub.connect(), watcher = hub.connect()
        watcher.run("WATCH")
        storage.failSync = true
        storage.failReplace = true
        XCTAssertTrue(actor.run("SELECT green")[0].hasPrefix("ERR internal "))
        storage.failSync = false
        XCTAssertTrue(actor.run("SELECT green")[0].hasPrefix("ERR internal "), "refused until the file is rewritten")
        XCTAssertEqual(watcher.run(), [])
        storage.failReplace = false
        XCTAssertEqual(actor.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(watcher.run(), ["EVENT 1 select /green"])
    }
}
