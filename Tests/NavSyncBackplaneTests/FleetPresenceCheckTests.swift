import XCTest
import NavSyncCore
import RedisClient
@testable import NavSyncServer
@testable import NavSyncBackplane

/// Presence from Redis checked like local input, on scripted links:
/// bad lines and oversized messages never reach a follower and are counted
/// in `presence_rejected`, members hashes are checked the same way, other
/// daemons' members are kept up to a limit and read again once below it,
/// and rooms left in the set with nobody in them are tidied out.
final class FleetPresenceCheckTests: XCTestCase {
    private func follower(_ f: StoreFixture) -> RecordingClient {
        let client = RecordingClient()
        let session = f.hub.accept(client)
        f.hub.receive(Array("PRESENCE\n".utf8), from: session)
        f.hub.flush()
        _ = client.newLines()
        return client
    }

    private func rejected(_ f: StoreFixture) -> String? {
        f.run("STATS").first { $0.hasPrefix("STAT presence_rejected ") }.map { String($0.split(separator: " ")[2]) }
    }

    private func membersTotal(_ f: StoreFixture) -> String? {
        f.run("STATS").first { $0.hasPrefix("STAT members_total ") }.map { String($0.split(separator: " ")[2]) }
    }

    func test_badLinesOnTheChannel_droppedAndCounted_goodOnesBesideThemPass() throws {
        let f = try StoreFixture()
        f.start()
        let client = follower(f)
        XCTAssertEqual(rejected(f), "0")
        f.redis.subscriber.message(channel: f.keys.presenceChannel, [
            "e1 M main zz.1 evil\u{1B}]0;pwned\u{07} control -",
            "e1 M main zz.2 bo control /red:\u{1B}[2J",
            "e1 M main zz.3 bo control /red:" + String(repeating: "x", count: 200_000),
            "e1 M main zz.4 admin admin -",
            "e1 M main admin ghost control -",
            "e1 M main zz.5 cy view /green",
        ].joined(separator: "\n"))
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["MEMBER zz.5 cy view /green"])
        XCTAssertEqual(rejected(f), "5")
        XCTAssertEqual(f.run("WHO"), ["MEMBER zz.5 cy view /green", "END"])
        XCTAssertTrue(f.hub.metricsText().contains("\nnavsync_presence_rejected_total 5\n"))
    }

    func test_aMessageOverOneMiB_droppedWhole_countedOnce() throws {
        let f = try StoreFixture()
        f.start()
        let client = follower(f)
        let line = "e1 M main zz.1 bo view -\n"
        let payload = String(repeating: line, count: (1 << 20) / line.utf8.count + 1)
        f.redis.subscriber.message(channel: f.keys.presenceChannel, payload)
        f.hub.flush()
        XCTAssertEqual(client.newLines(), [])
        XCTAssertEqual(rejected(f), "1")
        XCTAssertEqual(membersTotal(f), "0")
    }

    func test_membersHashes_badValuesDropped_emptyRoomsTidied_deadDaemonsDeleted() throws {
        let f = try StoreFixture()
        f.start()
        f.redis.commands.lose("connection reset")
        f.waitForAttempt(2)
        f.connect(members: nil)
        f.answer("SMEMBERS", .array([.bulk("ghost"), .bulk("main")]))
        f.answer("HGETALL", .array([]))
        f.answer("HGETALL", .array([.bulk("zz.4"), .bulk("bo view -"), .bulk("zz.5"), .bulk("evil admin -"),
                                    .bulk("zz.6"), .bulk("x view /red:\u{1B}"), .bulk("dd.1"), .bulk("gone view -")]))
        XCTAssertEqual(f.redis.commands.unanswered, [["EXISTS", f.keys.daemon("dd")], ["EXISTS", f.keys.daemon("zz")]])
        f.answer("EXISTS", .integer(0))
        f.answer("EXISTS", .integer(1))
        XCTAssertNil(f.store.unavailableReason)
        XCTAssertEqual(Array(f.redis.commands.unanswered.prefix(2)), [
            ["FCALL", MembersFunction.name, "2", f.keys.members("ghost"), f.keys.presenceRooms, "ghost"],
            ["FCALL", MembersFunction.name, "2", f.keys.members("main"), f.keys.presenceRooms, "main", "G", "dd.1", ""],
        ])
        XCTAssertEqual(f.run("WHO"), ["MEMBER zz.4 bo view -", "END"])
        XCTAssertEqual(rejected(f), "2")
    }

    func test_otherDaemonsMembers_keptUpToTheLimit_readAgainOnceBelowIt() throws {
        let f = try StoreFixture(maxRemoteMembers: 3)
        f.start()
        let client = follower(f)
        f.redis.subscriber.message(channel: f.keys.presenceChannel,
                                   (1...5).map { "e1 M main zz.\($0) m\($0) view -" }.joined(separator: "\n"))
        f.hub.flush()
        XCTAssertEqual(client.newLines(), (1...3).map { "MEMBER zz.\($0) m\($0) view -" })
        XCTAssertEqual(rejected(f), "2")
        XCTAssertEqual(membersTotal(f), "3")
        // A known member may still change at the limit.
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 M main zz.2 m2 view /green")
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["MEMBER zz.2 m2 view /green"])

        // One leaves: below the limit, so the next heartbeat reads the members again.
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 G main zz.1")
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["GONE zz.1"])
        f.store.presence.renew(try XCTUnwrap(f.store.attempt), epoch: f.store.epoch)
        XCTAssertEqual(f.redis.commands.unanswered, [["SMEMBERS", f.keys.presenceRooms], ["EXISTS", f.keys.daemon("zz")]])
        f.answer("SMEMBERS", .array([.bulk("main")]))
        f.answer("EXISTS", .integer(1))
        // What arrives while the hashes are read waits for the read.
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 G main zz.2")
        f.hub.flush()
        XCTAssertEqual(client.newLines(), [])
        f.answer("HGETALL", .array((2...5).flatMap { [RedisReply.bulk("zz.\($0)"), .bulk("m\($0) view -")] }))
        f.answer("EXISTS", .integer(1))
        f.hub.flush()
        XCTAssertEqual(client.newLines(), ["PRESENCE", "MEMBER zz.3 m3 view -", "MEMBER zz.4 m4 view -", "END"],
                       "read again: the first three by id, then zz.2 left")
        XCTAssertEqual(rejected(f), "3", "the one left out by the read is counted")
        XCTAssertEqual(membersTotal(f), "2")
    }

    func test_whileReadAgain_heldChangesBounded_theRestRefusedAndCounted() throws {
        let f = try StoreFixture(maxRemoteMembers: 2)
        f.start()
        f.redis.subscriber.message(channel: f.keys.presenceChannel,
                                   (1...3).map { "e1 M main zz.\($0) m\($0) view -" }.joined(separator: "\n"))
        f.redis.subscriber.message(channel: f.keys.presenceChannel, "e1 G main zz.1")
        XCTAssertEqual(rejected(f), "1")
        f.store.presence.renew(try XCTUnwrap(f.store.attempt), epoch: f.store.epoch)
        // Held while the hashes are read: two fit, the third is refused.
        f.redis.subscriber.message(channel: f.keys.presenceChannel,
                                   (4...6).map { "e1 M main zz.\($0) m\($0) view -" }.joined(separator: "\n"))
        XCTAssertEqual(rejected(f), "2")
        f.answer("SMEMBERS", .array([]))
        f.answer("EXISTS", .integer(1))
        XCTAssertEqual(f.run("WHO"), ["MEMBER zz.4 m4 view -", "MEMBER zz.5 m5 view -", "END"],
                       "the read found nobody; the held arrivals follow it")
    }
}
