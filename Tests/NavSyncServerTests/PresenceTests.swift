import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Presence on one daemon: members are the watching connections;
/// NAME, AT, WHO and PRESENCE, the MEMBER/GONE stream and its ordering
/// rules, the follower's resync and the members figures.
final class PresenceTests: XCTestCase {
    func test_who_listsWatchersInArrivalOrder_notOtherConnections() throws {
        let hub = try Hub()
        let a = hub.connect(), b = hub.connect(), idle = hub.connect()
        b.run("NAME bob", "WATCH")
        a.run("WATCH")
        XCTAssertEqual(idle.run("WHO"), ["MEMBER 2 bob control -", "MEMBER 1 anon control -", "END"])
        XCTAssertEqual(a.run("UNWATCH", "WHO"), ["OK 0", "MEMBER 2 bob control -", "END"])
        XCTAssertEqual(idle.run("JOIN lobby", "WHO"), ["STATE 0 /red", "END"])
    }

    func test_name_followsTheRule_andWhoamiShowsIt() throws {
        let hub = try Hub()
        let client = hub.connect()
        for bad in ["NAME", "NAME two words", "NAME caf\u{E9}", "NAME " + String(repeating: "x", count: 65), "NAME a/b"] {
            XCTAssertEqual(client.run(bad).first?.hasPrefix("ERR bad-args "), true, bad)
        }
        XCTAssertEqual(client.run("NAME ada.l@host-1_x", "WHOAMI"), ["OK 0", "YOU 1 ada.l@host-1_x control *"])
        XCTAssertEqual(client.run("NAME " + String(repeating: "x", count: 64)), ["OK 0"])
    }

    func test_at_isCheckedLikeOpen_andMakesNoRevision() throws {
        let hub = try Hub(limits: limits(maxDepth: 3))
        let client = hub.connect()
        client.run("WATCH")
        XCTAssertEqual(client.run("AT %zz").first?.hasPrefix("ERR bad-route "), true)
        XCTAssertEqual(client.run("AT /nosuch").first?.hasPrefix("ERR unknown-screen "), true)
        XCTAssertEqual(client.run("AT /red:data").first?.hasPrefix("ERR bad-args "), true)
        XCTAssertEqual(client.run("AT /red/blue/blue/blue").first?.hasPrefix("ERR limit "), true)
        XCTAssertEqual(client.run("AT").first?.hasPrefix("ERR bad-args "), true)
        XCTAssertEqual(client.run("AT /red /blue").first?.hasPrefix("ERR bad-args "), true)
        XCTAssertEqual(client.run("AT /red/blue:hi%20there#green", "WHO"),
                       ["OK 0", "MEMBER 1 anon control /red/blue:hi%20there#green", "END"])
        XCTAssertEqual(client.run("AT -", "WHO"), ["OK 0", "MEMBER 1 anon control -", "END"])
        XCTAssertNil(hub.server.roomStates["main"], "looking changes nothing in the room")
    }

    func test_viewer_mayLookAndFollowPresence_butNotSteer() throws {
        let hub = try Hub(grants: [.init(token: "kiosk-token-00000001", grant: Grant(role: .view, rooms: .every, name: "kiosk"))],
                          anonymous: Role.none)
        let viewer = hub.connect()
        XCTAssertEqual(viewer.run("WHO"), ["ERR auth-required AUTH <token> first"])
        XCTAssertEqual(viewer.run("AUTH kiosk-token-00000001", "WATCH", "AT /green", "PRESENCE"),
                       ["OK 0", "STATE 0 /red", "OK 0", "MEMBER 1 kiosk view /green", "END"])
        XCTAssertEqual(viewer.run("SELECT green").first?.hasPrefix("ERR forbidden "), true)
    }

    func test_presence_streamsArrivalsChangesAndDepartures_afterTheCommandsReply() throws {
        let hub = try Hub()
        let follower = hub.connect(), other = hub.connect()
        XCTAssertEqual(follower.run("PRESENCE"), ["END"])
        XCTAssertEqual(other.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 anon control -"])
        other.run("NAME olga")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 olga control -"])
        other.run("AT /blue")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 olga control /blue"])
        other.run("UNWATCH")
        XCTAssertEqual(follower.newLines(), ["GONE 2"])
        // Its own: the replies first, then its own line.
        XCTAssertEqual(follower.run("WATCH", "NAME fay"), ["STATE 0 /red", "OK 0", "MEMBER 1 fay control -"])
        XCTAssertEqual(follower.run("AT /green", "UNWATCH"), ["OK 0", "OK 0", "GONE 1"])
    }

    func test_presence_secondWatchIsSilent_andNameBeforeWatchIsKept() throws {
        let hub = try Hub()
        let follower = hub.connect(), other = hub.connect()
        follower.run("PRESENCE")
        other.run("NAME early", "AT /green")
        XCTAssertEqual(follower.newLines(), [], "not a member yet: nothing to tell")
        other.run("WATCH")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 early control /green"])
        XCTAssertEqual(other.run("WATCH", "WATCH 0"), ["STATE 0 /red", "CONTINUE 0"])
        XCTAssertEqual(follower.newLines(), [])
    }

    func test_presence_closeAndQuitAreGone() throws {
        let hub = try Hub()
        let follower = hub.connect(), a = hub.connect(), b = hub.connect()
        follower.run("PRESENCE")
        a.run("WATCH")
        b.run("WATCH")
        follower.newLines()
        a.transportFailed()
        hub.flush()
        XCTAssertEqual(follower.newLines(), ["GONE 2"])
        b.run("QUIT")
        XCTAssertEqual(follower.newLines(), ["GONE 3"])
        XCTAssertEqual(follower.run("WHO"), ["END"])
    }

    func test_presence_againAnswersAFreshListing_offStops() throws {
        let hub = try Hub()
        let follower = hub.connect(), other = hub.connect()
        other.run("SELECT green", "WATCH")
        XCTAssertEqual(follower.run("PRESENCE", "PRESENCE"),
                       ["MEMBER 2 anon control -", "END", "MEMBER 2 anon control -", "END"])
        XCTAssertEqual(follower.run("PRESENCE OFF", "presence off"), ["OK 1", "OK 1"])
        other.run("UNWATCH")
        XCTAssertEqual(follower.newLines(), [])
        XCTAssertEqual(follower.run("PRESENCE ON").first?.hasPrefix("ERR bad-args "), true)
    }

    func test_join_isGoneThereAndMemberHere_theJoinerGetsAListingAfterItsState() throws {
        let hub = try Hub()
        let mover = hub.connect(), stayer = hub.connect(), there = hub.connect()
        stayer.run("PRESENCE")
        there.run("JOIN lobby", "WATCH", "PRESENCE")
        mover.run("WATCH", "AT /green", "PRESENCE")
        XCTAssertEqual(stayer.newLines(), ["MEMBER 1 anon control /green"], "one line for the turn's arrival and AT")
        there.newLines()

        XCTAssertEqual(mover.run("JOIN lobby"),
                       ["STATE 0 /red", "PRESENCE", "MEMBER 3 anon control -", "MEMBER 1 anon control -", "END"])
        XCTAssertEqual(stayer.newLines(), ["GONE 1"])
        XCTAssertEqual(there.newLines(), ["MEMBER 1 anon control -"], "its AT is back to following")
        XCTAssertEqual(mover.run("JOIN lobby"), ["STATE 0 /red"], "joining its own room changes no presence")
        XCTAssertEqual(there.newLines(), [])

        // A follower that does not watch gets the listing without itself.
        let browser = hub.connect()
        browser.run("PRESENCE")
        XCTAssertEqual(browser.run("JOIN lobby"),
                       ["STATE 0 /red", "PRESENCE", "MEMBER 3 anon control -", "MEMBER 1 anon control -", "END"])
        XCTAssertEqual(there.newLines(), [])
        XCTAssertEqual(browser.run("JOIN main"), ["STATE 0 /red", "PRESENCE", "END"])
    }

    func test_slowFollower_dropsLines_thenStateAndListingOnceDrained() throws {
        let maxPending = 300
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect(), quietFollower = hub.connect()
        slow.run("WATCH", "PRESENCE")
        quietFollower.run("PRESENCE")
        slow.connection.queuedWriteBytes = maxPending + 1
        var crowd: [Client] = []
        for i in 0..<20 {
            let member = hub.connect()
            member.run("NAME member\(i)", "WATCH")
            crowd.append(member)
        }
        crowd[0].run("SELECT green")
        for member in crowd.prefix(15) { member.run("UNWATCH") }
        XCTAssertEqual(slow.newLines(), [], "over the budget: nothing more is queued for it")
        XCTAssertEqual(quietFollower.newLines().count, 20 + 15, "the others get every line")

        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        let expectedMembers = ["MEMBER 1 anon control -"] + (15..<20).map { "MEMBER \($0 + 3) member\($0) control -" }
        XCTAssertEqual(slow.newLines(), ["STATE 1 /green", "PRESENCE"] + expectedMembers + ["END"])
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), [], "the resync is sent once")
        crowd[19].run("UNWATCH")
        XCTAssertEqual(slow.newLines(), ["GONE 22"], "lines resume after it")
        XCTAssertEqual(slow.stats()["resyncs"], "1", "only the STATE counts")
    }

    func test_slowFollowerThatDoesNotWatch_getsOnlyTheListing() throws {
        let maxPending = 100
        let hub = try Hub(limits: limits(maxPending: maxPending))
        let slow = hub.connect()
        slow.run("PRESENCE")
        slow.connection.queuedWriteBytes = maxPending - 10
        let members = (0..<5).map { _ in hub.connect() }
        for member in members { member.run("WATCH") }
        XCTAssertEqual(slow.newLines(), [])
        slow.connection.queuedWriteBytes = 0
        slow.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(slow.newLines(), ["PRESENCE"] + (2...6).map { "MEMBER \($0) anon control -" } + ["END"])
        members[0].run("UNWATCH")
        XCTAssertEqual(slow.newLines(), ["GONE 2"])
    }

    func test_endOfInput_noLiveLineAfterTheListing() throws {
        let hub = try Hub()
        let other = hub.connect()
        other.run("WATCH")
        let follower = hub.connect()
        follower.send("PRESENCE")
        follower.inputEnded()
        other.send("NAME later")
        hub.flush()
        XCTAssertEqual(follower.newLines(), ["MEMBER 1 anon control -", "END"])
        XCTAssertTrue(follower.connection.isClosed)
    }

    func test_grantChange_isAMemberLine_andRevokedRoomIsGone() throws {
        let hub = try Hub(grants: [
            .init(token: "presenter-token-0001", grant: Grant(role: .control, rooms: .every, name: "ada")),
            .init(token: "lobby-desk-token-001", grant: Grant(role: .control, rooms: .only(["lobby"]), name: "desk")),
        ], anonymous: .view)
        let follower = hub.connect(), member = hub.connect()
        follower.run("PRESENCE")
        member.run("WATCH")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 anon view -"])
        member.run("AUTH presenter-token-0001")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 ada control -"])
        member.run("NAME mine")
        XCTAssertEqual(follower.newLines(), ["MEMBER 2 mine control -"])
        member.run("AUTH lobby-desk-token-001")
        XCTAssertEqual(follower.newLines(), ["GONE 2"])
    }

    func test_figures_countMembersOfTheRoomAndOfAll() throws {
        let hub = try Hub()
        let a = hub.connect(), b = hub.connect(), c = hub.connect()
        a.run("WATCH")
        b.run("WATCH")
        c.run("JOIN lobby", "WATCH")
        XCTAssertEqual(a.stats()["members"], "2")
        XCTAssertEqual(a.stats()["members_total"], "3")
        XCTAssertEqual(c.stats()["members"], "1")
        XCTAssertTrue(hub.server.metricsText().contains("\nnavsync_members 3\n"))
        b.transportFailed()
        XCTAssertEqual(a.stats()["members_total"], "2")
    }
}
