import NavSyncCore
@testable import NavSyncBackplane
import RedisClient
import RedisServerHarness
import UVLoop
import XCTest

/// The members function in a redis-server of the test's own, called
/// as the store calls it: the hash follows the changes in order, and the
/// set of rooms with members holds a room exactly while its hash has
/// anyone — also when another daemon adds a member right as the last one
/// of this daemon leaves.
final class MembersFunctionTests: XCTestCase {
    private let keys = BackplaneKeys(prefix: "t:")
    private var redis: RedisServerProcess!
    private var loop: EventLoop!
    private var connection: RedisConnection!

    override func setUpWithError() throws {
        redis = try RedisServerProcess()
        loop = try EventLoop()
        var ready = false
        connection = RedisConnection(loop: loop, endpoint: RedisEndpoint(url: redis.url)!, onReady: { ready = true }, onGone: { _ in })
        loop.runUntil { ready }
        XCTAssertTrue(ready, "connected to redis")
        XCTAssertEqual(send(["FUNCTION", "LOAD", "REPLACE", MembersFunction.source])?.text, MembersFunction.library)
    }

    override func tearDown() {
        connection?.close()
        loop?.shutdown()
        redis?.remove()
    }

    private func send(_ command: [String]) -> RedisReply? {
        var answer: RedisReply??
        XCTAssertTrue(connection.send(command) { answer = .some($0) })
        loop.runUntil { answer != nil }
        return answer ?? nil
    }

    private func call(_ room: String, _ changes: [PresenceMessage]) -> RedisReply? {
        send(MembersFunction.call(keys: keys, room: room, changes: changes))
    }

    private func roomsWithMembers() -> [String] {
        (send(["SMEMBERS", keys.presenceRooms])?.elements?.compactMap(\.text) ?? []).sorted()
    }

    private func hash(_ room: String) -> [String] {
        send(["HGETALL", keys.members(room)])?.elements?.compactMap(\.text) ?? []
    }

    private func member(_ id: String, at: String? = nil) -> Member { Member(id: id, name: "n", role: .view, at: at) }

    func test_changesInOrder_theLastOneLeaving_removesHashAndSetEntry() {
        XCTAssertEqual(call("main", [.member(room: "main", member("a.1")), .member(room: "main", member("a.2", at: "/red")),
                                     .member(room: "main", member("a.1", at: "/green"))])?.unsigned, 2)
        XCTAssertEqual(call("lobby", [.member(room: "lobby", member("a.3"))])?.unsigned, 1)
        XCTAssertEqual(hash("main"), ["a.1", "n view /green", "a.2", "n view /red"])
        XCTAssertEqual(roomsWithMembers(), ["lobby", "main"])
        XCTAssertEqual(call("main", [.gone(room: "main", id: "a.1")])?.unsigned, 1)
        XCTAssertEqual(roomsWithMembers(), ["lobby", "main"])
        XCTAssertEqual(call("main", [.gone(room: "main", id: "a.2")])?.unsigned, 0)
        XCTAssertEqual(send(["EXISTS", keys.members("main")])?.unsigned, 0, "the hash is gone")
        XCTAssertEqual(roomsWithMembers(), ["lobby"], "and so is the room's entry")
        // Arriving and leaving in one call leaves nothing behind either.
        XCTAssertEqual(call("brief", [.member(room: "brief", member("a.4")), .gone(room: "brief", id: "a.4")])?.unsigned, 0)
        XCTAssertEqual(roomsWithMembers(), ["lobby"])
    }

    func test_anotherDaemonsMemberAddedAsTheLastLeaves_isNeverLost() {
        XCTAssertEqual(call("main", [.member(room: "main", member("a.1"))])?.unsigned, 1)
        // Daemon b's member arrives before a's last leaves: the room stays.
        XCTAssertEqual(call("main", [.member(room: "main", member("b.1"))])?.unsigned, 2)
        XCTAssertEqual(call("main", [.gone(room: "main", id: "a.1")])?.unsigned, 1)
        XCTAssertEqual(roomsWithMembers(), ["main"])
        // b's member arrives right after a's last left: the room is back.
        XCTAssertEqual(call("main", [.gone(room: "main", id: "b.1")])?.unsigned, 0)
        XCTAssertEqual(roomsWithMembers(), [])
        XCTAssertEqual(call("main", [.member(room: "main", member("b.2"))])?.unsigned, 1)
        XCTAssertEqual(roomsWithMembers(), ["main"])
        XCTAssertEqual(hash("main"), ["b.2", "n view -"])
    }

    func test_noChange_tidiesAnEmptyRoomOutOfTheSet_keepsAFullOne() {
        XCTAssertEqual(send(["SADD", keys.presenceRooms, "ghost", "main"])?.unsigned, 2)
        XCTAssertEqual(send(["HSET", keys.members("main"), "a.1", "n view -"])?.unsigned, 1)
        XCTAssertEqual(call("ghost", [])?.unsigned, 0)
        XCTAssertEqual(call("main", [])?.unsigned, 1)
        XCTAssertEqual(roomsWithMembers(), ["main"])
        XCTAssertEqual(send(MembersFunction.remove(keys: keys, room: "main", ids: ["a.1", "x.9"]))?.unsigned, 0)
        XCTAssertEqual(roomsWithMembers(), [])
    }
}
