import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The server and its journal: nothing is acknowledged before it is written.
final class PersistenceTests: XCTestCase {
    func test_journal_initWritesSnapshotAtOnce() throws {
        let storage = MemoryStorage()
        let rooms = ["main": RoomState(stack: stack("/green/blue:x"), revision: 4)]
        _ = try Journal(storage: storage, policy: .batch, rooms: rooms)
        XCTAssertEqual(storage.replaces, 1)
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms, rooms)
    }

    func test_journal_initFailsWhenFileCannotBeWritten() {
        let storage = MemoryStorage()
        storage.failReplace = true
        XCTAssertThrowsError(try Journal(storage: storage, policy: .batch, rooms: [:]))
    }

    func test_persistence_changeIsRecordedBeforeOkIsQueued() throws {
        let hub = try Hub(persistence: .batch)
        let actor = hub.connect(), watcher = hub.connect()
        watcher.run("WATCH")
        var seenAtAppend: [(actorOutbox: Int, watcherOutbox: Int)] = []
        hub.storage!.onAppend = { _ in
            seenAtAppend.append((actor.session.output.queue.count, watcher.session.output.queue.count))
        }
        actor.send("SELECT green")
        XCTAssertEqual(seenAtAppend.count, 1)
        XCTAssertEqual(seenAtAppend.first?.actorOutbox, 0, "OK must not be queued before the append")
        XCTAssertEqual(seenAtAppend.first?.watcherOutbox, 0, "EVENT must not be queued before the append")
        XCTAssertEqual(actor.session.output.queue.count, 1)
        hub.flush()
        XCTAssertEqual(actor.newLines(), ["OK 1"])
        XCTAssertEqual(hub.storage!.lines.last, #"{"op":"select","rev":1,"room":"main","route":"/green"}"#)
    }

    func test_persistence_failedAppendIsInternalAndChangesNothing() throws {
        let hub = try Hub(persistence: .batch)
        let actor = hub.connect(), watcher = hub.connect()
        watcher.run("WATCH")
        actor.run("SELECT green")
        watcher.newLines()
        let before = hub.storage!.bytes

        hub.storage!.failAppend = true
        let reply = actor.run("PUSH blue")
        XCTAssertEqual(reply.count, 1)
        XCTAssertTrue(reply[0].hasPrefix("ERR internal "), reply[0])
        XCTAssertEqual(actor.run("GET"), ["STATE 1 /green"])
        XCTAssertEqual(watcher.run(), [], "no event for a change that was not made")
        XCTAssertEqual(hub.storage!.bytes, before)
        XCTAssertTrue(hub.logged("state file write or fsync failed"))

        hub.storage!.failAppend = false
        XCTAssertEqual(actor.run("PUSH blue"), ["OK 2"])
        XCTAssertEqual(watcher.run(), ["EVENT 2 push /green/blue"])
        XCTAssertEqual(try JournalFile.load(hub.storage!.bytes!).rooms["main"], RoomState(stack: stack("/green/blue"), revision: 2))
    }

    func test_persistence_failedFirstChangeOfRoomDoesNotCountTheRoom() throws {
        let hub = try Hub(limits: limits(maxRooms: 1), persistence: .batch)
        let client = hub.connect()
        hub.storage!.failAppend = true
        XCTAssertTrue(client.run("SELECT green")[0].hasPrefix("ERR internal"))
        XCTAssertEqual(client.stats()["rooms"], "0")
        hub.storage!.failAppend = false
        XCTAssertEqual(client.run("SELECT green"), ["OK 1"])
        XCTAssertEqual(client.stats()["rooms"], "1")
    }

    func test_persistence_batchSyncsOncePerFlushWhenDirty() throws {
        let hub = try Hub(persistence: .batch)
        let client = hub.connect()
        let storage = hub.storage!
        XCTAssertEqual(storage.syncs, 0)

        for i in 0..<10 { client.send("PUSH blue \(i)", "POP") }
        XCTAssertEqual(storage.appends, 20)
        XCTAssertEqual(storage.syncs, 0, "no fsync per change")
        hub.flush()
        XCTAssertEqual(storage.syncs, 1)

        // Nothing changed: no fsync.
        client.run("GET", "SELECT red")
        hub.flush()
        XCTAssertEqual(storage.syncs, 1)

        client.run("SELECT green")
        XCTAssertEqual(storage.syncs, 2)
    }

    func test_persistence_alwaysSyncsPerChange() throws {
        let hub = try Hub(persistence: .always)
        let client = hub.connect()
        let storage = hub.storage!
        var syncsAtAppend: [Int] = []
        storage.onAppend = { _ in syncsAtAppend.append(storage.syncs) }
        client.send("SELECT green", "SELECT blue", "SELECT blue", "POP")
        XCTAssertEqual(storage.syncs, 2)
        XCTAssertEqual(syncsAtAppend, [0, 1])
        hub.flush()
        XCTAssertEqual(storage.syncs, 2, "nothing is left for the flush to sync")
        XCTAssertEqual(client.newLines().prefix(3), ["OK 1", "OK 2", "OK 2"])
    }

    func test_persistence_failedSyncWithAlwaysPolicyLeavesLoadableJournal() throws {
        let hub = try Hub(persistence: .always)
        let client = hub.connect()
        let storage = hub.storage!
        XCTAssertEqual(client.run("SELECT green"), ["OK 1"])

        storage.failSync = true
        let reply = client.run("SELECT blue")
        XCTAssertTrue(reply[0].hasPrefix("ERR internal "), reply[0])
        XCTAssertEqual(client.run("GET"), ["STATE 1 /green"])

        storage.failSync = false
        XCTAssertEqual(client.run("PUSH red"), ["OK 2"])
        // The refused change must not be read back, and the next one must not clash with it.
        let loaded = try JournalFile.load(storage.bytes!)
        XCTAssertEqual(loaded.rooms["main"], RoomState(stack: stack("/green/red"), revision: 2))
    }

    func test_persistence_failedSyncAndRewriteRefuseChangesUntilRewritten() throws {
        let hub = try Hub(persistence: .always)
        let client = hub.connect()
        let storage = hub.storage!
        XCTAssertEqual(client.run("SELECT green"), ["OK 1"])

        storage.failSync = true
        storage.failReplace = true
        XCTAssertTrue(client.run("SELECT blue")[0].hasPrefix("ERR internal "))
        storage.failSync = false
        // The refused line is still in the file: appending after it would
        // repeat revision 2, so changes are refused until it is rewritten.
        let appends = storage.appends
        XCTAssertTrue(client.run("PUSH red")[0].hasPrefix("ERR internal "))
        XCTAssertEqual(storage.appends, appends)
        XCTAssertEqual(client.run("GET"), ["STATE 1 /green"])

        storage.failReplace = false
        hub.flush()
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms["main"], RoomState(stack: stack("/green"), revision: 1))
        XCTAssertEqual(client.run("PUSH red"), ["OK 2"])
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms["main"], RoomState(stack: stack("/green/red"), revision: 2))
    }


    func test_persistence_journalRoundTripsServerState() throws {
        let hub = try Hub(persistence: .batch)
        let a = hub.connect(), b = hub.connect()
        a.run("SELECT green", "PUSH blue caf\u{E9} & more", "NEXT")
        b.run("JOIN kitchen", "OPEN /red/blue:a%2Fb/green", "POP")
        b.run("JOIN idle", "GET", "WATCH")
        let loaded = try JournalFile.load(hub.storage!.bytes!)
        XCTAssertFalse(loaded.droppedTornTail)
        XCTAssertEqual(loaded.rooms, hub.server.roomStates)
        XCTAssertEqual(loaded.rooms.keys.sorted(), ["kitchen", "main"])
        XCTAssertEqual(loaded.rooms["main"], RoomState(stack: [RouteEntry(screen: "green"), RouteEntry(screen: "red")], revision: 3))
        XCTAssertEqual(loaded.rooms["kitchen"]?.route, "/red/blue:a%2Fb")

        // A server started from what was loaded continues the revisions.
        let restarted = try Hub(rooms: loaded.rooms)
        let c = restarted.connect()
        XCTAssertEqual(c.run("GET", "POP"), ["STATE 3 /green/red", "OK 4"])
        XCTAssertEqual(c.stats()["rooms"], "2")
    }

    func test_compaction_rewritesSnapshotWhenTailIsLarge() throws {
        let hub = try Hub(limits: limits(maxLine: 70_000), persistence: .batch)
        let client = hub.connect()
        let storage = hub.storage!
        XCTAssertEqual(storage.replaces, 1)
        let data = String(repeating: "d", count: 60_000)
        var i = 0
        while storage.replaces == 1 && i < 100 {
            i += 1
            client.run("SELECT blue \(i) \(data)")
        }
        XCTAssertEqual(storage.replaces, 2, "compaction should have happened")
        XCTAssertGreaterThan(i, Journal.compactionTailBytes / 60_000)
        XCTAssertEqual(storage.lines.count, 1, "the file is one fresh snapshot")
        XCTAssertTrue(storage.lines[0].hasPrefix(#"{"navsync":2"#))
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms, hub.server.roomStates)
        XCTAssertEqual(hub.journal!.wantsCompaction, false)

        // Changes keep appending after it.
        XCTAssertEqual(client.run("SELECT red"), ["OK \(i + 1)"])
        XCTAssertEqual(storage.lines.count, 2)
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms["main"]?.revision, UInt64(i + 1))
    }

    func test_compaction_notWhenSnapshotIsLargerThanTail() throws {
        let storage = MemoryStorage()
        let big = String(repeating: "b", count: 700_000)
        let rooms = ["a": RoomState(stack: [RouteEntry(screen: "blue", data: big)], revision: 1),
                     "b": RoomState(stack: [RouteEntry(screen: "blue", data: big)], revision: 1)]
        let journal = try Journal(storage: storage, policy: .batch, rooms: rooms)
        // A tail past the byte budget but under twice the snapshot does not compact.
        try journal.record(room: "a", state: RoomState(stack: [RouteEntry(screen: "blue", data: big + "x")], revision: 2), op: "push")
        try journal.record(room: "a", state: RoomState(stack: [RouteEntry(screen: "blue", data: big + "y")], revision: 3), op: "push")
        XCTAssertGreaterThan(storage.size, Journal.compactionTailBytes)
        XCTAssertFalse(journal.wantsCompaction)
    }

    func test_compaction_failureIsRetriedLater() throws {
        let hub = try Hub(limits: limits(maxLine: 70_000), persistence: .batch)
        let client = hub.connect()
        let storage = hub.storage!
        storage.failReplace = true
        let data = String(repeating: "d", count: 60_000)
        var revision: UInt64 = 0
        while !hub.journal!.wantsCompaction && revision < 100 {
            revision += 1
            XCTAssertEqual(client.run("SELECT blue \(revision) \(data)"), ["OK \(revision)"])
        }
        XCTAssertTrue(hub.logged("compaction failed"))
        // Changes are still accepted; only the file keeps growing.
        revision += 1
        XCTAssertEqual(client.run("SELECT green"), ["OK \(revision)"])
        XCTAssertTrue(hub.journal!.wantsCompaction)
        storage.failReplace = false
        hub.flush()
        XCTAssertFalse(hub.journal!.wantsCompaction)
        XCTAssertEqual(storage.lines.count, 1)
        XCTAssertEqual(try JournalFile.load(storage.bytes!).rooms["main"], RoomState(stack: stack("/green"), revision: revision))
    }
}
