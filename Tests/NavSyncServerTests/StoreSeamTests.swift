import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A store that answers only when the test says so, in any order: the hub
/// must keep each connection's replies in command order, broadcast in the
/// order the store reports changes, and pass refusals through.
final class LateStore: RoomStore {
    weak var delegate: RoomStoreDelegate?
    var unavailableReason: String?
    var persistenceName: String { "late" }
    var figures: [Figure] { [.gauge("late_pending", waiting.count, help: "Changes this store has not answered yet.")] }
    private(set) var waiting: [ChangeRequest] = []
    private(set) var turnsEnded = 0
    /// Take a session's next change while its earlier ones are in flight.
    var pipelines = false

    func submit(_ change: ChangeRequest) { waiting.append(change) }
    func mayPipeline(after change: ChangeRequest) -> Bool { pipelines }
    func endOfTurn() { turnsEnded += 1 }

    /// Answers the change waiting at `index` as the rules would against the
    /// hub's view, and reports it when applied.
    @discardableResult
    func decide(_ index: Int = 0) -> ChangeOutcome {
        let change = waiting.remove(at: index)
        let delegate = delegate!
        let rules = delegate.changeRules
        let outcome = rules.evaluate(change.mutation, ifRevision: change.ifRevision,
                                     against: delegate.storedState(of: change.room) ?? rules.initialState)
        delegate.changeFinished(change, outcome)
        return outcome
    }

    /// Whether its copy of rooms may trail the truth (as a fleet's does).
    var trails = false
    /// Catch-ups asked for and not finished yet; with `catchesUpAtOnce` none wait.
    private(set) var catchUps: [(room: String, revision: UInt64, done: (String?) -> Void)] = []
    var catchesUpAtOnce = false
    var copyMayTrail: Bool { trails }
    func catchUp(_ room: String, to revision: UInt64, then done: @escaping (String?) -> Void) {
        if catchesUpAtOnce { done(nil) } else { catchUps.append((room, revision, done)) }
    }

    func finishCatchUp(_ failure: String? = nil) { catchUps.removeFirst().done(failure) }

    func fail(_ index: Int = 0, _ error: ProtocolError) {
        delegate!.changeFinished(waiting.remove(at: index), .refused(error))
    }
}

final class StoreSeamTests: XCTestCase {
    private func hub(_ store: LateStore) throws -> Hub { try Hub(store: store) }

    func test_store_linesAfterAChangeInFlight_waitAndAnswerInOrder() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect()
        XCTAssertEqual(a.run("PUSH blue", "GET", "PING after", "SELECT green"), [], "nothing before the store answers")
        XCTAssertEqual(store.waiting.count, 1, "the SELECT waits behind the PUSH, not beside it")
        store.decide()
        hub.flush()
        XCTAssertEqual(a.newLines(), ["OK 1", "STATE 1 /red/blue", "PONG after"])
        XCTAssertEqual(store.waiting.map(\.mutation), [.select(RouteEntry(screen: "green"))])
        store.decide()
        XCTAssertEqual(a.run(), ["OK 2"])
    }

    func test_store_ownOk_comesBeforeOwnEvent_andOtherWatchersGetTheEvent() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect(), b = hub.connect()
        XCTAssertEqual(a.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(b.run("WATCH"), ["STATE 0 /red"])
        a.run("PUSH green")
        store.decide()
        XCTAssertEqual(a.run(), ["OK 1", "EVENT 1 push /red/green"])
        XCTAssertEqual(b.run(), ["EVENT 1 push /red/green"])
    }

    func test_store_answersOutOfStep_broadcastFollowsTheStore_notTheSubmitOrder() throws {
        let store = LateStore()
        let hub = try hub(store)
        let watcher = hub.connect(), a = hub.connect(), b = hub.connect()
        watcher.run("WATCH")
        a.run("PUSH green")
        b.run("PUSH blue hi")
        store.decide(1)   // b's change reaches the store first
        store.decide(0)
        hub.flush()
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 push /red/blue:hi", "EVENT 2 push /red/blue:hi/green"])
        XCTAssertEqual(b.newLines(), ["OK 1"])
        XCTAssertEqual(a.newLines(), ["OK 2"])
        XCTAssertEqual(a.run("GET"), ["STATE 2 /red/blue:hi/green"])
    }

    func test_store_changeMadeElsewhere_isBroadcast_andCountsAsARoom() throws {
        let store = LateStore()
        let hub = try hub(store)
        let watcher = hub.connect()
        watcher.run("JOIN lab", "WATCH")
        hub.server.roomChanged("lab", to: RoomState(stack: stack("/green"), revision: 1), op: "select")
        XCTAssertEqual(watcher.run(), ["EVENT 1 select /green"])
        XCTAssertEqual(watcher.stats()["rooms"], "1")
        XCTAssertEqual(watcher.stats()["persistence"], "late")
        XCTAssertEqual(watcher.stats()["late_pending"], "0")
    }

    func test_store_refusal_isTheReply_andLaterLinesStillRun() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect()
        a.run("IF 0 PUSH green", "PING")
        store.fail(0, ProtocolError(.conflict, "current=7"))
        XCTAssertEqual(a.run(), ["ERR conflict current=7", "PONG"])
        a.run("PUSH blue", "GET")
        store.fail(0, ProtocolError(.unavailable, "lost the connection to redis"))
        XCTAssertEqual(a.run(), ["ERR unavailable lost the connection to redis", "STATE 0 /red"])
    }

    func test_store_unavailable_refusesStateCommands_andMovesNothing() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect()
        store.unavailableReason = "redis at 127.0.0.1:1 is unreachable"
        let refused = "ERR unavailable redis at 127.0.0.1:1 is unreachable"
        XCTAssertEqual(a.run("GET", "WATCH", "JOIN lab", "PUSH blue", "IF 0 POP", "PING", "HELLO"),
                       [refused, refused, refused, refused, refused, "PONG", "HELLO navsync 1 9.9.9-test"])
        XCTAssertTrue(store.waiting.isEmpty, "nothing reached the store")
        XCTAssertEqual(a.stats()["room"], "main", "a refused JOIN does not move the connection")
        store.unavailableReason = nil
        hub.server.roomChanged("main", to: RoomState(stack: stack("/green"), revision: 1), op: "select")
        XCTAssertEqual(a.run(), [], "a refused WATCH did not subscribe")
        XCTAssertEqual(a.run("GET"), ["STATE 1 /green"])
    }

    func test_store_roomReplaced_resyncsEveryWatcher_withAFreshState() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect(), b = hub.connect()
        a.run("WATCH")
        b.run("WATCH")
        hub.server.roomChanged("main", to: RoomState(stack: stack("/green"), revision: 1), op: "select")
        // Events already broadcast stay before the resync; none after it.
        hub.server.roomReplaced("main", with: nil)
        XCTAssertEqual(a.run(), ["EVENT 1 select /green", "STATE 0 /red"])
        XCTAssertEqual(b.run(), ["EVENT 1 select /green", "STATE 0 /red"])
        XCTAssertEqual(a.stats()["rooms"], "0")
        XCTAssertEqual(a.stats()["resyncs"], "2")
        hub.server.roomReplaced("main", with: RoomState(stack: stack("/blue"), revision: 3))
        XCTAssertEqual(a.run(), ["STATE 3 /blue"])
        XCTAssertEqual(a.run("GET"), ["STATE 3 /blue"])
    }

    func test_store_inputEndsWhileAChangeIsInFlight_answersThenCloses() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect()
        a.sendRaw("PUSH blue\nGET")
        a.inputEnded()
        hub.flush()
        XCTAssertFalse(a.connection.isClosed, "the change is still with the store")
        store.decide()
        XCTAssertEqual(a.run(), ["OK 1", "STATE 1 /red/blue"])
        XCTAssertTrue(a.connection.isClosed)
    }

    func test_store_connectionGoneWhileInFlight_answerIsDropped_changeStillBroadcast() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect(), watcher = hub.connect()
        watcher.run("WATCH")
        a.run("PUSH green")
        a.transportFailed()
        let written = a.connection.writes.count
        store.decide()
        hub.flush()
        XCTAssertEqual(a.connection.writes.count, written)
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 push /red/green"])
    }

    func test_store_manyLinesHeldBehindAChange_pauseReading_untilAnswered() throws {
        let store = LateStore()
        let hub = try hub(store)
        let a = hub.connect()
        a.send("PUSH green")
        let ping = String(repeating: "PING \(String(repeating: "x", count: 90))\n", count: 1000)
        a.sendRaw(ping)
        XCTAssertEqual(a.connection.count("pause"), 1)
        store.decide()
        hub.flush()
        XCTAssertEqual(a.connection.count("resume"), 1)
        XCTAssertEqual(a.newLines().count, 1001)
    }

    func test_store_pipelining_changesGoBehindEachOther_otherCommandsWait() throws {
        let store = LateStore()
        store.pipelines = true
        let hub = try hub(store)
        let a = hub.connect()
        XCTAssertEqual(a.run("PUSH blue", "PUSH green", "GET", "PUSH red"), [])
        XCTAssertEqual(store.waiting.count, 2, "the second change goes behind the first; GET and what follows wait")
        store.decide()
        XCTAssertEqual(a.run(), ["OK 1"])
        store.decide()
        XCTAssertEqual(a.run(), ["OK 2", "STATE 2 /red/blue/green"])
        XCTAssertEqual(store.waiting.count, 1, "the change after GET runs once GET has")
        store.decide()
        XCTAssertEqual(a.run(), ["OK 3"])
    }

    func test_store_pipelining_earlyRefusal_waitsForTheEarlierAnswer() throws {
        let store = LateStore()
        store.pipelines = true
        let hub = try hub(store)
        let a = hub.connect()
        a.run("PUSH blue", "IF 9 POP", "PUSH green")
        XCTAssertEqual(store.waiting.count, 3)
        store.fail(1, ProtocolError(.conflict, "current=0"))
        XCTAssertEqual(a.run(), [], "the refusal of the second change waits for the first's answer")
        store.decide(1)   // the third, applied: also held behind the first
        XCTAssertEqual(a.run(), [])
        store.decide(0)
        XCTAssertEqual(a.run(), ["OK 2", "ERR conflict current=0", "OK 1"],
                       "answers in command order (this store applied the third change first)")
    }

    func test_store_pipelining_isBounded_perConnection() throws {
        let store = LateStore()
        store.pipelines = true
        let hub = try hub(store)
        let a = hub.connect()
        a.sendRaw(String(repeating: "SELECT green\n", count: Server.maxChangesInFlightPerSession + 10))
        XCTAssertEqual(store.waiting.count, Server.maxChangesInFlightPerSession)
        store.decide()
        XCTAssertEqual(store.waiting.count, Server.maxChangesInFlightPerSession, "one answered, one more taken")
    }

    func test_journalStore_answersWithinTheCall_asBefore() throws {
        let hub = try Hub(persistence: .always)
        let a = hub.connect()
        XCTAssertEqual(a.run("PUSH green", "GET", "IF 0 POP", "POP", "POP"),
                       ["OK 1", "STATE 1 /red/green", "ERR conflict current=1", "OK 2", "ERR at-root the stack has only its root entry"])
        XCTAssertEqual(a.stats()["persistence"], "journal")
    }

    func test_trailingStore_watchPastTheCopy_waitsForTheCatchUp_thenContinues_laterLinesAfter() throws {
        let store = LateStore()
        store.trails = true
        let hub = try hub(store)
        let a = hub.connect()
        XCTAssertEqual(a.run("WATCH 2", "GET"), [], "not answered from a copy behind revision 2")
        XCTAssertEqual(store.catchUps.map { "\($0.room) \($0.revision)" }, ["main 2"])
        hub.server.roomChanged("main", to: RoomState(stack: stack("/green"), revision: 1), op: "select")
        hub.server.roomChanged("main", to: RoomState(stack: stack("/blue"), revision: 2), op: "select")
        store.finishCatchUp()
        XCTAssertEqual(a.run(), ["CONTINUE 2", "STATE 2 /blue"])
        hub.server.roomChanged("main", to: RoomState(stack: stack("/green"), revision: 3), op: "select")
        XCTAssertEqual(a.run(), ["EVENT 3 select /green"])
    }

    func test_trailingStore_catchUpFails_watchRefusedUnavailable_notSubscribed() throws {
        let store = LateStore()
        store.trails = true
        let hub = try hub(store)
        let a = hub.connect()
        a.run("WATCH 4")
        store.finishCatchUp("lost the store")
        XCTAssertEqual(a.run("PING"), ["ERR unavailable lost the store", "PONG"])
        hub.server.roomChanged("main", to: RoomState(stack: stack("/green"), revision: 1), op: "select")
        XCTAssertEqual(a.run(), [], "a refused WATCH did not subscribe")
    }

    func test_trailingStore_caughtUpWithinTheCall_linesGoOnInOrder() throws {
        let store = LateStore()
        store.trails = true
        store.catchesUpAtOnce = true
        let hub = try hub(store)
        let a = hub.connect()
        // The store holds no revision 5: a resync from the copy, and the next line runs after it.
        XCTAssertEqual(a.run("WATCH 5", "PING x"), ["STATE 0 /red", "PONG x"])
    }

    func test_storeThatDoesNotTrail_isNotAskedToCatchUp() throws {
        let store = LateStore()
        let hub = try hub(store)
        XCTAssertEqual(hub.connect().run("WATCH 5"), ["STATE 0 /red"])
        XCTAssertTrue(store.catchUps.isEmpty)
    }
}
