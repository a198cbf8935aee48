import NavSyncCore
import XCTest
import NavSyncClient

/// The state machine names itself, learns its member id and keeps
/// the room's members from `PRESENCE`, `MEMBER`, `GONE` and unasked listings.
final class SyncClientPresenceTests: XCTestCase {
    private func options(token: String? = nil, name: String? = nil, fallback: String? = nil,
                         presence: Bool = true) -> SyncClientOptions {
        var options = SyncClientOptions(token: token, watch: true, reconnect: true)
        options.name = name
        options.fallbackName = fallback
        options.presence = presence
        return options
    }

    func test_greeting_namesItself_asksWhoItIs_thenFollowsAfterWatch() {
        var h = Harness(options(name: "ada", fallback: "root"))
        h.start()
        h.connected()
        XCTAssertEqual(h.takeSent(), ["WHOAMI", "NAME ada", "WATCH", "PRESENCE"])
        _ = h.takeNotes()
        h.receive("YOU 7 anon control *", "OK 0", "STATE 0 /red", "MEMBER 7 ada control -", "END")
        let notes = h.takeNotes()
        XCTAssertEqual(notes, [.identity(Identity(id: "7", name: "anon", role: "control", rooms: "*")), .snapshot(state(0, "/red"), .connected),
                               .link(.live), .members([Member(id: "7", name: "ada", role: .control)])])
        XCTAssertEqual(h.client.memberID, "7")
    }

    func test_fallbackName_withoutToken_isSaidAtOnce_withToken_onlyWhenTheGrantNamesNobody() {
        var anonymous = Harness(options(fallback: "root", presence: false))
        anonymous.start()
        anonymous.connected()
        XCTAssertEqual(anonymous.takeSent(), ["NAME root", "WATCH"])

        var named = Harness(options(token: "t0k", fallback: "root", presence: false))
        named.start()
        named.connected()
        XCTAssertEqual(named.takeSent(), ["AUTH t0k", "WHOAMI", "WATCH"])
        named.receive("OK 0", "YOU 3 ada control *")
        XCTAssertEqual(named.takeSent(), [], "the grant's name is kept")

        var unnamed = Harness(options(token: "t0k", fallback: "root", presence: false))
        unnamed.start()
        unnamed.connected()
        _ = unnamed.takeSent()
        unnamed.receive("OK 0", "YOU 3 anon view *")
        XCTAssertEqual(unnamed.takeSent(), ["NAME root"])
        unnamed.receive("STATE 0 /red", "OK 0")
        XCTAssertEqual(unnamed.client.link, .live)
    }

    func test_liveLines_changeTheList_unaskedListingReplacesIt() {
        var h = Harness(options())
        h.start()
        h.connected()
        h.receive("YOU 1 anon control *", "STATE 0 /red", "MEMBER 1 anon control -", "END")
        _ = h.takeAll()
        h.receive("MEMBER 2 bo view -", "MEMBER 1 anon control /green", "GONE 2")
        XCTAssertEqual(h.client.members, [Member(id: "1", name: "anon", role: .control, at: "/green")])
        XCTAssertEqual(h.takeNotes().count, 3)
        // A listing mid-STATS stays out of the STATS answer.
        h.submit(.stats)
        h.receive("PRESENCE", "MEMBER 4 cy control -", "END", "STAT members 1", "END")
        XCTAssertEqual(h.client.members, [Member(id: "4", name: "cy", role: .control)])
        let notes = h.takeNotes()
        XCTAssertEqual(notes.first, .members([Member(id: "4", name: "cy", role: .control)]))
        XCTAssertEqual(notes.last, .reply(1, .listing(["STAT members 1"])))
    }

    func test_oldDaemon_refusingPresence_stillGoesLive() {
        var h = Harness(options(name: "ada"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("ERR unknown-command unknown command 'WHOAMI'; try HELP",
                  "ERR unknown-command unknown command 'NAME'; try HELP", "STATE 0 /red",
                  "ERR unknown-command unknown command 'PRESENCE'; try HELP")
        XCTAssertEqual(h.client.link, .live)
        XCTAssertEqual(h.client.members, [])
    }

    func test_requests_writeTheirLines() {
        XCTAssertEqual(ClientRequest.look(at: "/red/blue:x").line, "AT /red/blue:x")
        XCTAssertEqual(ClientRequest.look(at: nil).line, "AT -")
        XCTAssertEqual(ClientRequest.name("ada").line, "NAME ada")
        XCTAssertEqual(ClientRequest.who.expectation, .listing)
        XCTAssertNotNil(ClientRequest.name("two words").problem)
    }
}
