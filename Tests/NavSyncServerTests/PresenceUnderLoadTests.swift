import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A store that only records what the hub tells it of this daemon's members.
final class MemberRecordingStore: RoomStore {
    weak var delegate: RoomStoreDelegate?
    var unavailableReason: String? { nil }
    func unavailableReason(forRoom room: String) -> String? { nil }
    var persistenceName: String { "recording" }
    var figures: [Figure] { [] }
    private(set) var told: [String] = []

    func submit(_ change: ChangeRequest) {
        delegate!.changeFinished(change, .refused(ProtocolError(.unavailable, "this store keeps no rooms")))
    }
    func endOfTurn() {}
    func memberChanged(_ member: Member, in room: String) {
        told.append("set \(room) \(member.id) \(member.name) \(member.atText)")
    }
    func memberGone(_ id: String, from room: String) { told.append("gone \(room) \(id)") }

    func takeTold() -> [String] {
        defer { told.removeAll() }
        return told
    }
}

/// Presence under load: one line per member per loop turn, a turn's lines
/// shared by every follower and counted once in `--max-output-memory`, the
/// budget's resync reaching followers that do not watch, and the store told
/// once per member per turn.
final class PresenceUnderLoadTests: XCTestCase {
    func test_atFlood_oneLinePerMemberPerTurn_withItsLastState() throws {
        let hub = try Hub()
        let follower = hub.connect(), member = hub.connect()
        follower.run("PRESENCE")
        member.run("WATCH")
        follower.newLines()
        for i in 0..<500 { member.send(i % 2 == 0 ? "AT /red" : "AT /green") }
        member.send("AT /blue")
        hub.flush()
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 anon control /blue"])
        XCTAssertEqual(member.newLines().count, 501, "every AT is still answered")
    }

    func test_changeBackToWhatFollowersHeard_makesNoLine() throws {
        let hub = try Hub()
        let follower = hub.connect(), member = hub.connect()
        follower.run("PRESENCE")
        member.run("WATCH")
        follower.newLines()
        member.run("AT /green", "AT -")
        XCTAssertEqual(follower.newLines(), [])
    }

    func test_arriveAndLeaveInOneTurn_makesNothing() throws {
        let hub = try Hub()
        let follower = hub.connect(), visitor = hub.connect()
        follower.run("PRESENCE")
        XCTAssertEqual(visitor.run("WATCH", "NAME v", "UNWATCH"), ["STATE 0 /red", "OK 0", "OK 0"])
        XCTAssertEqual(follower.newLines(), [])
        XCTAssertEqual(follower.run("WHO"), ["END"])
    }

    func test_leaveAndReturnInOneTurn_isGoneThenMember_keepingWhosOrder() throws {
        let hub = try Hub()
        let follower = hub.connect(), a = hub.connect(), b = hub.connect(), c = hub.connect()
        follower.run("PRESENCE")
        a.run("WATCH")
        b.run("WATCH")
        follower.newLines()
        a.send("UNWATCH")
        c.send("WATCH")
        a.send("WATCH")
        b.send("NAME bea")
        hub.flush()
        XCTAssertEqual(follower.newLines(), ["GONE 2", "MEMBER 3 bea control -", "MEMBER 4 anon control -", "MEMBER 2 anon control -"])
        XCTAssertEqual(follower.run("WHO"), ["MEMBER 3 bea control -", "MEMBER 4 anon control -", "MEMBER 2 anon control -", "END"],
                       "the lines left the follower's list in WHO's order")
    }

    func test_followerStartingMidTurn_getsTheListingThenOnlyLaterChanges() throws {
        let hub = try Hub()
        let early = hub.connect(), member = hub.connect(), late = hub.connect()
        early.run("PRESENCE")
        member.run("WATCH")
        early.newLines()
        member.send("AT /green")
        late.send("PRESENCE")
        member.send("AT /blue")
        hub.flush()
        XCTAssertEqual(late.newLines(), ["MEMBER 2 anon control /green", "END", "MEMBER 2 anon control /blue"])
        XCTAssertEqual(early.newLines().last, "MEMBER 2 anon control /blue", "ends in the member's last state")
    }

    func test_store_isToldOncePerMemberPerTurn() throws {
        let store = MemberRecordingStore()
        let hub = try Hub(store: store)
        let member = hub.connect(), visitor = hub.connect()
        member.run("WATCH")
        XCTAssertEqual(store.takeTold(), ["set main 1 anon -"])
        for i in 0..<200 { member.send("AT /red/blue:x\(i)") }
        hub.flush()
        XCTAssertEqual(store.takeTold(), ["set main 1 anon /red/blue:x199"])
        visitor.run("WATCH", "UNWATCH")
        XCTAssertEqual(store.takeTold(), [], "came and went within the turn: nothing to tell the fleet")
        member.run("JOIN lobby")
        XCTAssertEqual(store.takeTold(), ["gone main 1", "set lobby 1 anon -"])
        member.transportFailed()
        hub.flush()
        XCTAssertEqual(store.takeTold(), ["gone lobby 1"])
    }

    func test_stalledFollowers_holdOneSharedBufferPerTurn_chargedOnce() throws {
        let hub = try Hub(limits: limits(maxPending: 100_000))
        let followers = (0..<100).map { _ in hub.connect() }
        let member = hub.connect()
        for follower in followers {
            follower.run("PRESENCE")
            follower.connection.holdsWrites = true
            follower.connection.keepsSharedBuffers = true
        }
        member.run("WATCH", "NAME m")
        let buffers = followers.map { $0.connection.sharedWrites.last }
        XCTAssertTrue(buffers.allSatisfy { $0 != nil && $0 === buffers[0] }, "one buffer for every follower")
        let line = "MEMBER \(member.session.id) m control -\n".utf8.count
        XCTAssertEqual(hub.server.fanOut.sharedLedger.heldBytes, line + SharedBytesLedger.blockOverhead)
        XCTAssertEqual(hub.server.heldOutputBytes, line + SharedBytesLedger.blockOverhead, "nothing copied per follower")
    }

    func test_overOutputBudget_stalledFollowersThatDoNotWatch_areResynced_thenGetTheListing() throws {
        let bound = 8_000
        var budget = limits(maxPending: 100_000)
        budget.maxOutputMemoryBytes = bound
        let hub = try Hub(limits: budget)
        let stalled = (0..<50).map { _ in hub.connect() }
        let reader = hub.connect(), flooder = hub.connect(), bystander = hub.connect()
        for follower in stalled + [reader] {
            follower.run("PRESENCE")
        }
        for follower in stalled {
            follower.connection.holdsWrites = true
            follower.connection.keepsSharedBuffers = true
        }
        flooder.run("WATCH")
        let data = String(repeating: "x", count: 400)
        for turn in 0..<200 {
            flooder.run("AT /red/blue:\(data)\(turn)")
            XCTAssertLessThanOrEqual(hub.server.heldOutputBytes, bound + bound / 8 + 1_000, "turn \(turn)")
        }
        XCTAssertEqual(reader.newLines().count, 1 + 200, "the arrival, then a line per turn")
        XCTAssertEqual(bystander.run("GET"), ["STATE 0 /red"])
        XCTAssertTrue(hub.logged("over --max-output-memory \(bound)") || hub.logged("(--max-output-memory)"))
        for follower in stalled {
            follower.connection.drainEverything()
            follower.newLines()
            follower.writeQueueDrained()
        }
        hub.flush()
        for follower in stalled {
            XCTAssertEqual(follower.newLines(), ["PRESENCE", "MEMBER \(flooder.session.id) anon control /red/blue:\(data)199", "END"])
        }
        flooder.run("AT -")
        for follower in stalled {
            XCTAssertEqual(follower.newLines(), ["MEMBER \(flooder.session.id) anon control -"], "lines resume after the listing")
        }
    }
}
