import XCTest
import NavSyncCore
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// `WATCH <rev>` judged against the fleet-wide revision (BACKPLANE.md 1.3),
/// on scripted links: the daemon's subscription is behind when the test
/// simply does not publish, so the order of every reply is the test's.
final class RedisCatchUpTests: XCTestCase {
    private let redAndBlue = RoomState(stack: [RouteEntry(screen: "red"), RouteEntry(screen: "blue")], revision: 1)

    private func stateHash(_ revision: UInt64, _ route: String, _ tag: String) -> RedisReply {
        .array([.bulk(String(revision)), .bulk(route), .bulk(tag)])
    }

    private func historyEntry(_ revision: UInt64, route: String, tag: String) -> RedisReply {
        .array([.bulk("\(revision)-0"), .array([.bulk("op"), .bulk("push"), .bulk("route"), .bulk(route), .bulk("tag"), .bulk(tag)])])
    }

    /// The reads of rooms not answered yet (a watcher's presence goes to Redis too).
    private func roomReads(_ f: StoreFixture) -> [[String]] {
        f.redis.commands.unanswered.filter { ["HMGET", "XRANGE"].contains($0.first) }
    }

    /// A store up with room `main` at revision 1 in its view.
    private func fixture() throws -> StoreFixture {
        let f = try StoreFixture(rooms: ["main": redAndBlue])
        f.start(rooms: [("main", [.bulk("1"), .bulk("/red/blue"), .bulk("t1")])])
        return f
    }

    func test_catchUp_viewBehindRedis_readsTheHistoryFirst_thenContinues_laterLinesWait() throws {
        let f = try fixture()
        XCTAssertEqual(f.run("WATCH 3", "GET"), [], "nothing is answered from a copy behind revision 3")
        f.answer("HMGET", stateHash(3, "/red/blue/green/blue", "o.2"))
        XCTAssertEqual(f.redis.commands.unanswered, [["XRANGE", f.keys.history("main"), "2-0", "+"]])
        f.answer("XRANGE", .array([historyEntry(2, route: "/red/blue/green", tag: "o.1"),
                                   historyEntry(3, route: "/red/blue/green/blue", tag: "o.2")]))
        XCTAssertEqual(f.recorder.take(), ["changed main 2 /red/blue/green", "changed main 3 /red/blue/green/blue"])
        XCTAssertEqual(f.output(), ["CONTINUE 3", "STATE 3 /red/blue/green/blue"])
        // The held messages arrive late: already known, not applied twice.
        f.publish(revision: 2, tag: "o.1", op: "push", route: "/red/blue/green")
        f.publish(revision: 3, tag: "o.2", op: "push", route: "/red/blue/green/blue")
        f.publish(revision: 4, tag: "o.3", op: "pop", route: "/red/blue/green")
        XCTAssertEqual(f.recorder.take(), ["changed main 4 /red/blue/green"])
        XCTAssertEqual(f.output(), ["EVENT 4 pop /red/blue/green"])
    }

    func test_catchUp_redisNotPastTheView_answersFromTheViewWithoutReadingHistory() throws {
        let f = try fixture()
        XCTAssertEqual(f.run("WATCH 9"), [])
        f.answer("HMGET", stateHash(1, "/red/blue", "t1"))
        XCTAssertEqual(roomReads(f), [], "nothing to fill")
        XCTAssertEqual(f.output(), ["STATE 1 /red/blue"])
    }

    func test_catchUp_revisionTheViewHolds_asksRedisNothing() throws {
        let f = try fixture()
        XCTAssertEqual(f.run("WATCH 1"), ["CONTINUE 1"])
        XCTAssertEqual(roomReads(f), [])
    }

    func test_catchUp_connectionLostDuringTheFill_refusedUnavailable_notSubscribed() throws {
        let f = try fixture()
        f.run("WATCH 3")
        f.answer("HMGET", stateHash(3, "/red/blue/green/blue", "o.2"))
        f.redis.commands.lose("reset by peer")
        let refused = f.output()
        XCTAssertEqual(refused.count, 1)
        XCTAssertTrue(refused[0].hasPrefix("ERR unavailable "), refused[0])
        XCTAssertFalse(f.session.watching, "a refused WATCH does not subscribe")
    }

    func test_catchUp_fillStartedAfterTheRead_answeredWhenThatFillEnds() throws {
        let f = try fixture()
        f.run("WATCH 4")
        // A gap the channel shows starts a fill after the WATCH's read was sent.
        f.publish(revision: 3, tag: "o.2", op: "push", route: "/red/blue/green/blue")
        XCTAssertEqual(f.redis.commands.unanswered.map(\.first), ["HMGET", "XRANGE"])
        f.answer("HMGET", stateHash(4, "/red/blue/green", "o.3"))
        XCTAssertEqual(f.redis.commands.unanswered.count, 1, "the fill under way reads past revision 4: no second one")
        XCTAssertEqual(f.output(), [])
        f.answer("XRANGE", .array([historyEntry(2, route: "/red/blue/green", tag: "o.1"),
                                   historyEntry(3, route: "/red/blue/green/blue", tag: "o.2"),
                                   historyEntry(4, route: "/red/blue/green", tag: "o.3")]))
        XCTAssertEqual(f.output(), ["CONTINUE 4"])
        XCTAssertEqual(roomReads(f), [])
    }
}
