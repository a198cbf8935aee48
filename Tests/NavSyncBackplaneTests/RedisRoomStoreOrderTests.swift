import XCTest
import NavSyncCore
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// Orders of replies and pushes that a real Redis produces only by chance
/// (the reply of a round and the messages of the fleet come on two
/// connections), forced one at a time on scripted links: what the store
/// reports to the hub, and what it sends to Redis.
final class RedisRoomStoreOrderTests: XCTestCase {
    private let redAndBlue = RoomState(stack: [RouteEntry(screen: "red"), RouteEntry(screen: "blue")], revision: 1)
    private let lostMidRound = "lost the connection to redis; the change may or may not have been applied"

    private func stateHash(_ revision: UInt64, _ route: String, _ tag: String) -> [RedisReply] {
        [.bulk(String(revision)), .bulk(route), .bulk(tag)]
    }

    private func historyEntry(_ revision: UInt64, op: String, route: String, tag: String) -> RedisReply {
        .array([.bulk("\(revision)-0"), .array([.bulk("op"), .bulk(op), .bulk("route"), .bulk(route), .bulk("tag"), .bulk(tag)])])
    }

    private func figure(_ store: RedisRoomStore, _ key: String) -> String? {
        store.figures.first { $0.key == key }?.value
    }

    func test_round_ownPublishBeforeItsReply_isAnsweredOnceAsApplied() throws {
        let f = try StoreFixture()
        f.start()
        XCTAssertEqual(f.run("PUSH blue"), [])
        let admit = f.answer("FCALL", .admitted())
        XCTAssertEqual(admit[1], ChangeFunction.admitName, "a room's first change asks the room set first")
        let round = try XCTUnwrap(SentRound(try XCTUnwrap(f.redis.commands.unanswered.last)))
        XCTAssertEqual(round.fromRevision, 0)
        XCTAssertEqual(round.steps.map(\.revision), [1])
        XCTAssertEqual(round.steps[0].route, "/red/blue")

        // The subscriber link delivers the round's own message before the command link's reply.
        let step = round.steps[0]
        f.publish(revision: 1, tag: step.tag, op: step.op, route: step.route)
        XCTAssertEqual(f.recorder.take(), [], "a message that may be this daemon's own waits for the round's reply")

        f.answer("FCALL", .applied(1))
        XCTAssertEqual(f.recorder.take(), ["finished main applied 1 /red/blue"],
                       "the change is reported once, as applied, never also as another daemon's change")
        XCTAssertEqual(f.output(), ["OK 1"])
        XCTAssertEqual(f.redis.commands.unanswered, [], "nothing else was sent")
    }

    func test_round_gapInTheMiddle_isFilledFromTheRoomsHistory() throws {
        let f = try StoreFixture(rooms: ["main": redAndBlue])
        f.start(rooms: [("main", stateHash(1, "/red/blue", "t0"))])
        f.run("PUSH green")
        let round = try XCTUnwrap(SentRound(try XCTUnwrap(f.redis.commands.unanswered.last)))
        XCTAssertEqual(round.fromRevision, 1)
        XCTAssertEqual(round.fromTag, "t0", "judged against the change Redis said made revision 1")
        let own = round.steps[0]

        // Our revision 2's message is missed; another daemon's revision 3 arrives, before our reply.
        f.publish(revision: 3, tag: "other.1", op: "push", route: "/red/blue/green/blue")
        XCTAssertEqual(f.redis.commands.unanswered.last, ["XRANGE", f.keys.history("main"), "2-0", "+"],
                       "the gap is read from the room's history, from the first revision missing")
        XCTAssertEqual(f.recorder.take(), [])

        f.answer("FCALL", .applied(2))
        XCTAssertEqual(f.recorder.take(), ["finished main applied 2 /red/blue/green"])
        f.answer("XRANGE", .array([historyEntry(2, op: own.op, route: own.route, tag: own.tag),
                                   historyEntry(3, op: "push", route: "/red/blue/green/blue", tag: "other.1")]))
        XCTAssertEqual(f.recorder.take(), ["changed main 3 /red/blue/green/blue"],
                       "our own revision is not reported twice; the missed-then-next one is reported once, in order")
        XCTAssertEqual(figure(f.store, "backplane_gap_fills"), "1")
        XCTAssertEqual(figure(f.store, "backplane_gaps_filled"), "2")
        XCTAssertEqual(f.output(), ["OK 2"])
    }

    func test_round_replyOutOfStep_refusesTheChangeAsMaybeAppliedAndStartsOver() throws {
        let f = try StoreFixture()
        f.start()
        f.run("PUSH blue")
        f.answer("FCALL", .admitted())
        let commands = f.redis.commands
        f.answer("FCALL", .applied(5))
        XCTAssertEqual(f.recorder.take(), ["finished main refused unavailable \(lostMidRound)"])
        XCTAssertEqual(f.store.unavailableReason, "resynchronising with redis: redis applied revision 5 where 1 was sent")
        XCTAssertTrue(commands.isGone, "the connection that said it is dropped")
        XCTAssertEqual(f.output(), ["ERR unavailable \(lostMidRound)"])
    }

    func test_round_connectionLostMidRound_refusesInFlightAsMaybeAppliedAndQueuedAsUnavailable() throws {
        let f = try StoreFixture()
        f.start()
        f.run("PUSH blue")
        f.answer("FCALL", .admitted())
        XCTAssertNotNil(SentRound(try XCTUnwrap(f.redis.commands.unanswered.last)))
        f.run("PUSH green")
        XCTAssertEqual(f.redis.commands.unanswered.count, 1, "the second change waits for the round in flight")

        f.redis.commands.lose("connection reset by peer")
        let reports = f.recorder.take()
        XCTAssertEqual(reports.count, 2)
        XCTAssertEqual(reports.first, "finished main refused unavailable \(lostMidRound)")
        // Its reason is the store's down reason at that moment: the link
        // answers nil before it reports itself lost, so the text is not
        // pinned here (it still reads "connecting to redis at ...").
        XCTAssertTrue(reports.last?.hasPrefix("finished main refused unavailable ") ?? false, "\(reports)")
        XCTAssertEqual(f.store.unavailableReason, "redis at \(f.storeEndpoint) unreachable: connection reset by peer")
        XCTAssertEqual(figure(f.store, "backplane_outages"), "1")
    }

    func test_fleet_unreadableRoute_setsTheRoomAsideUntilItsKeysReadAgain() throws {
        let f = try StoreFixture()
        f.start()
        f.publish(revision: 1, tag: "other.1", op: "push", route: "red/blue")
        XCTAssertEqual(f.recorder.take(), [], "a route that does not decode moves nothing")
        XCTAssertEqual(figure(f.store, "backplane_rooms_unreadable"), "1")

        let refused = f.run("GET")
        XCTAssertEqual(refused.count, 1)
        XCTAssertTrue(refused.first?.hasPrefix("ERR unavailable room main cannot be read from redis") ?? false, "\(refused)")
        XCTAssertEqual(f.redis.commands.unanswered, [["HMGET", f.keys.state("main"), "rev", "route", "tag"]],
                       "the refusal reads the room's keys again")

        f.answer("HMGET", .array(stateHash(1, "/red/blue", "other.1")))
        XCTAssertEqual(f.recorder.take(), ["replaced main 1 /red/blue"], "the repaired room is resynced")
        XCTAssertNil(f.store.unavailableReason(forRoom: "main"))
        XCTAssertEqual(figure(f.store, "backplane_rooms_unreadable"), "0")
    }

    func test_connection_epochChanged_resyncsEveryRoomOnReconnect() throws {
        let f = try StoreFixture(rooms: ["main": redAndBlue])
        f.start(rooms: [("main", stateHash(1, "/red/blue", "t0"))])
        XCTAssertEqual(f.recorder.take(), [], "the room matches Redis: nothing to report")

        f.publish(epoch: "e2", revision: 2, tag: "other.1", op: "push", route: "/red/blue/green")
        XCTAssertEqual(f.recorder.take(), [], "a message of another epoch is not applied")
        XCTAssertTrue(f.store.unavailableReason?.hasPrefix("resynchronising with redis: a change was published under another epoch") ?? false,
                      f.store.unavailableReason ?? "up")

        f.waitForAttempt(2)
        f.connect(epoch: "e2")
        XCTAssertEqual(f.recorder.take(), ["replaced main none"], "every room starts over; no old event is replayed")
        XCTAssertNil(f.store.unavailableReason)
        XCTAssertEqual(f.redis.commands.unanswered, [])
    }
}

extension StoreFixture {
    var storeEndpoint: String { "\(RedisEndpoint.tcp(host: "127.0.0.1", port: 6379, database: 0))" }
}
