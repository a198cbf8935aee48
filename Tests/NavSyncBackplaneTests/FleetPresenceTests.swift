import XCTest
import NavSyncCore
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// (1.2) Presence across a fleet, on scripted links: this daemon's member
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

    func test_memberChanges_leaveOncePerTurn_hashesThenOneMessage() throws {
        let f = try StoreFixture()
        f.start()
        let other = f.hub.accept(RecordingClient())
        f.hub.receive(Array("NAME ada\nWATCH\n".utf8), from: f.session)
        f.hub.receive(Array("WATCH\nAT /green\n".utf8), from: other)
        f.hub.flush()
        let tag = f.store.daemonTag
        let me = f.session.memberID, them = other.memberID
        XCTAssertEqual(me, "\(tag).1")
        let sent = f.redis.commands.unanswered
        XCTAssertEqual(sent.map(\.first), ["SET", "HSET", "HSET", "HSET", "SADD", "PUBLISH"], "\(sent)")
        XCTAssertEqual(sent[0], ["SET", f.keys.daemon(tag), "1", "PX", "10000"])
        XCTAssertEqual(sent[1], ["HSET", f.keys.members("main"), me, "ada control -"])
        XCTAssertEqual(sent[3], ["HSET", f.keys.members("main"), them, "anon control /green"])
        XCTAssertEqual(sent[4], ["SADD", f.keys.presenceRooms, "main"])
        XCTAssertEqual(sent[5], ["PUBLISH", f.keys.presenceChannel,
                                 "e1 M main \(me) ada control -\ne1 M main \(them) anon control -\ne1 M main \(them) anon control /green"])
        f.hub.receive(Array("UNWATCH\n".utf8), from: other)
        f.hub.flush()
        XCTAssertEqual(f.redis.commands.unanswered.suffix(2).map { Array($0.prefix(3)) },
                       [["HDEL", f.keys.members("main"), them], ["PUBLISH", f.keys.presenceChannel, "e1 G main \(them)"]])
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
        f.store.renewPresence(try XCTUnwrap(f.store.attempt))
        XCTAssertEqual(f.redis.commands.unanswered, [["EXISTS", f.keys.daemon("yy")], ["EXISTS", f.keys.daemon("zz")]])
        f.answer("EXISTS", .integer(1))
        f.answer("EXISTS", .integer(0))
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["GONE zz.4"])
        XCTAssertEqual(f.redis.commands.unanswered, [["HDEL", f.keys.members("main"), "zz.4"]])
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
        let writes = f.redis.commands.unanswered.map { Array($0.prefix(3)) }
        XCTAssertEqual(writes, [["HDEL", f.keys.members("main"), "dead.1"], ["SET", f.keys.daemon(f.store.daemonTag), "1"],
                                ["HSET", f.keys.members("main"), me], ["SADD", f.keys.presenceRooms, "main"],
                                ["PUBLISH", f.keys.presenceChannel, "e1 M main \(me) ada control -"]])
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["PRESENCE", "MEMBER \(me) ada control -", "MEMBER zz.4 bo view -", "END"])
    }
}
