import XCTest
import NavSyncCore
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// Presence across a fleet, on scripted links: this daemon's member
/// changes leave once per turn (hashes, then one message), other daemons'
/// arrive as members, a daemon whose key expired has its members gone, and
/// a reconnect reads the fleet's members again and writes this daemon's own.
final class FleetPresenceTests: XCTestCase {
    private func follower(_ f: StoreFixture) -> (RecordingClient, Session) {
        let client = RecordingClient()
        let session = f.hub.accept(client)
        f.hub.receive(Array("PRESENCE\n".utf8), from: session)
        f.hub.flush()
        _ = client.newLines()
        return (client, session)
    }

    /// The members function's call for `room` with `changes` as (verb, id, value).
    private func membersCall(_ f: StoreFixture, _ room: String, _ changes: [(String, String, String)]) -> [String] {
        ["FCALL", MembersFunction.name, "2", f.keys.members(room), f.keys.presenceRooms, room]
            + changes.flatMap { [$0.0, $0.1, $0.2] }
    }

    func test_memberChanges_leaveOncePerTurn_oneCallPerRoomThenOneMessage() throws {
        let f = try StoreFixture()
        f.start()
        let tag = f.store.daemonTag
        let me = "\(tag).1", them = "\(tag).2"
        f.store.memberChanged(Member(id: me, name: "ada", role: .control), in: "main")
        f.store.memberChanged(Member(id: them, name: "anon", role: .control, at: "/green"), in: "lobby")
        f.store.memberChanged(Member(id: them, name: "anon", role: .control, at: "/blue"), in: "main")
        f.store.endOfTurn()
        let sent = f.redis.commands.unanswered
        XCTAssertEqual(sent.map(\.first), ["SET", "FCALL", "FCALL", "PUBLISH"], "\(sent)")
        XCTAssertEqual(sent[0], ["SET", f.keys.daemon(tag), "1", "PX", "10000"])
        XCTAssertEqual(sent[1], membersCall(f, "main", [("M", me, "ada control -"), ("M", them, "anon control /blue")]))
        XCTAssertEqual(sent[2], membersCall(f, "lobby", [("M", them, "anon control /green")]))
        XCTAssertEqual(sent[3], ["PUBLISH", f.keys.presenceChannel,
                                 "e1 M main \(me) ada control -\ne1 M lobby \(them) anon control /green\ne1 M main \(them) anon control /blue"])
        f.store.memberGone(them, from: "main")
        f.store.endOfTurn()
        XCTAssertEqual(Array(f.redis.commands.unanswered.suffix(2)),
                       [membersCall(f, "main", [("G", them, "")]), ["PUBLISH", f.keys.presenceChannel, "e1 G main \(them)"]])
    }

    func test_aTurnOverSixtyFourKiB_isPublishedInSeveralMessages_eachWhole() throws {
        let f = try StoreFixture()
        f.start()
        let tag = f.store.daemonTag
        let route = "/" + Array(repeating: "red", count: 60).joined(separator: "/")
        var sent: [PresenceMessage] = []
        for n in 1...400 {
            let member = Member(id: "\(tag).\(n)", name: "member\(n)", role: .view, at: route)
            sent.append(.member(room: "main", member))
            f.store.memberChanged(member, in: "main")
        }
        f.store.endOfTurn()
        let messages = f.redis.commands.unanswered.filter { $0.first == "PUBLISH" }.map { $0[2] }
        XCTAssertGreaterThan(messages.count, 1)
        XCTAssertTrue(messages.allSatisfy { $0.utf8.count <= 64 << 10 }, "\(messages.map(\.utf8.count))")
        let bounds = PresenceBounds(maxLineBytes: 4096, maxDepth: 64)
        let read = messages.flatMap { PresenceMessage.parse(Array($0.utf8), bounds: bounds).changes.map(\.change) }
        XCTAssertEqual(read, sent, "every change, in order, none cut")
    }

    func test_otherDaemonsMembers_reachFollowers_ownEchoAndOldEpochIgnored() throws {
        let f = try StoreFixture()
        f.start()
        let (client, _) = follower(f)
        f.redis.subscriber.message(channel: f.keys.presenceChannel,
                                   "e1 M main zz.4 bo view /blue:x\ne1 M lobby zz.5 cy control -\nold M main zz.6 dee view -")
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 M main \(f.store.daemonTag).99 echo control -")
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["MEMBER zz.4 bo view /blue:x"])
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 G main zz.4")
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["GONE zz.4"])
        let stats = f.run("STATS").filter { $0.hasPrefix("STAT members") }
        XCTAssertEqual(stats, ["STAT members 0", "STAT members_total 1"])
    }

    func test_daemonWhoseKeyExpired_itsMembersAreGone() throws {
        let f = try StoreFixture()
        f.start()
        let (client, _) = follower(f)
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 M main zz.4 bo view -\ne1 M main yy.2 cy view -")
        f.hub.flush()
        XCTAssertEqual(client.newLines().count, 2)
        f.store.presence.renew(try XCTUnwrap(f.store.attempt), epoch: f.store.epoch)
        XCTAssertEqual(f.redis.commands.unanswered, [["EXISTS", f.keys.daemon("yy")], ["EXISTS", f.keys.daemon("zz")]])
        f.answer("EXISTS", .integer(1))
        f.answer("EXISTS", .integer(0))
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["GONE zz.4"])
        XCTAssertEqual(f.redis.commands.unanswered, [membersCall(f, "main", [("G", "zz.4", "")])],
                       "the dead daemon's entry goes, with the room's set entry when it was the last")
    }

    func test_reconnect_readsTheFleetsMembers_dropsDeadDaemons_writesOwnAgain_relistsFollowers() throws {
        let f = try StoreFixture()
        f.start()
        f.run("NAME ada", "WATCH")
        let (client, _) = follower(f)
        XCTAssertEqual(client.newLines(), [])
        f.redis.commands.lose("connection reset")
        f.waitForAttempt(2)
        XCTAssertEqual(f.run("WHO").first?.hasPrefix("ERR unavailable"), true, "no member list while redis is away")
        f.connect(members: nil)
        f.answer("SMEMBERS", .array([.bulk("main")]))
        f.answer("HGETALL", .array([.bulk("zz.4"), .bulk("bo view -"), .bulk("dead.1"), .bulk("ghost control -"),
                                    .bulk("\(f.store.daemonTag).1"), .bulk("ada control -")]))
        XCTAssertEqual(f.redis.commands.unanswered, [["EXISTS", f.keys.daemon("dead")], ["EXISTS", f.keys.daemon("zz")]])
        f.answer("EXISTS", .integer(0))
        f.answer("EXISTS", .integer(1))
        XCTAssertNil(f.store.unavailableReason)
        let me = f.session.memberID
        let writes = f.redis.commands.unanswered
        XCTAssertEqual(writes, [membersCall(f, "main", [("G", "dead.1", "")]),
                                ["SET", f.keys.daemon(f.store.daemonTag), "1", "PX", "10000"],
                                membersCall(f, "main", [("M", me, "ada control -")]),
                                ["PUBLISH", f.keys.presenceChannel, "e1 M main \(me) ada control -"]])
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["PRESENCE", "MEMBER \(me) ada control -", "MEMBER zz.4 bo view -", "END"])
    }
}
