import NavSyncCore
import XCTest
import NavSyncClient

/// Drives a `SyncClient` by hand: no socket, a clock the test moves, and
/// every action collected so a test reads the machine's decisions.
struct Harness {
    var client: SyncClient
    var now: UInt64 = 1000
    var actions: [ClientAction] = []

    init(_ options: SyncClientOptions, seed: UInt64 = 7) {
        client = SyncClient(options: options, seed: seed)
    }

    /// Lines written since the last call, split one per element.
    mutating func takeSent() -> [String] {
        var lines: [String] = []
        var rest: [ClientAction] = []
        for action in actions {
            if case .send(let text) = action {
                lines += text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            } else {
                rest.append(action)
            }
        }
        actions = rest
        return lines
    }

    mutating func takeNotes() -> [ClientNote] {
        let notes = actions.compactMap { action -> ClientNote? in
            if case .note(let note) = action { return note }
            return nil
        }
        actions.removeAll { if case .note = $0 { return true } else { return false } }
        return notes
    }

    mutating func takeAll() -> [ClientAction] {
        defer { actions = [] }
        return actions
    }

    mutating func start() { actions += client.start(now: now) }
    mutating func connected() { actions += client.connectSucceeded(now: now) }
    mutating func receive(_ lines: String...) {
        for line in lines { actions += client.received(line, now: now) }
    }
    mutating func ended(_ reason: String = "eof") { actions += client.connectionEnded(reason, now: now) }
    mutating func connectFailed(_ reason: String = "connection refused") { actions += client.connectFailed(reason, now: now) }
    mutating func advance(_ milliseconds: UInt64) {
        now += milliseconds
        actions += client.tick(now: now)
    }
    @discardableResult
    mutating func submit(_ request: ClientRequest) -> RequestID {
        let (id, more) = client.submit(request, now: now)
        actions += more
        return id
    }

    /// Connects, greets and answers WATCH with `STATE rev route`.
    mutating func goLive(rev: UInt64 = 0, route: String = "/red") {
        start()
        connected()
        receive("STATE \(rev) \(route)")
        _ = takeAll()
    }
}

func state(_ rev: UInt64, _ route: String) -> RoomState {
    guard case .success(let navigation) = Route.decode(route) else { fatalError("bad route in test: \(route)") }
    return RoomState(navigation, revision: rev)
}

final class SyncClientTests: XCTestCase {
    let watchOnly = SyncClientOptions(watch: true, reconnect: true)

    func test_start_asksToConnect_thenGreetsInOrder() {
        var h = Harness(.interactive(room: "lobby", token: "s3cret"))
        h.start()
        XCTAssertEqual(h.takeAll(), [.note(.link(.connecting(failures: 0))), .connect])
        h.connected()
        // WHOAMI before JOIN: a refused JOIN is explained with the grant's rooms. STATS waits for the grant.
        XCTAssertEqual(h.takeSent(), ["AUTH s3cret", "WHOAMI", "JOIN lobby", "SCREENS", "MESSAGES", "WATCH"])
        XCTAssertEqual(h.takeNotes(), [.link(.handshaking)])
    }

    func test_mainRoom_isNotJoined() {
        var h = Harness(SyncClientOptions(room: "main", watch: true, reconnect: true))
        h.start()
        h.connected()
        XCTAssertEqual(h.takeSent(), ["WATCH"])
    }

    func test_greeting_answers_makeTheLinkLive_withSnapshotAndCatalog() {
        var h = Harness(.interactive(room: "lobby", token: "s3cret"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("OK 4", "YOU 3 kiosk view *", "STATE 4 /green",
                  "SCREEN red red green none Red", "SCREEN blue blue red optional Big Blue", "END",
                  "MESSAGE blue Pick a shade  of blue", "END",
                  "STATE 4 /green")
        XCTAssertEqual(h.takeSent(), ["STATS"], "a grant for every room may read STATS")
        h.receive("STAT version 0.1.0", "STAT watchers 3", "END")
        let notes = h.takeNotes()
        XCTAssertEqual(notes, [
            .identity(Identity(id: "3", name: "kiosk", role: "view", rooms: "*")),
            .catalog([
                CatalogEntry(name: "red", color: .red, next: "green", data: .none, title: "Red"),
                CatalogEntry(name: "blue", color: .blue, next: "red", data: .optional, title: "Big Blue",
                             message: "Pick a shade  of blue"),
            ]),
            .snapshot(state(4, "/green"), .connected),
            .link(.live),
            .stats(["version": "0.1.0", "watchers": "3"]),
        ])
        XCTAssertEqual(h.client.watchers, 3)
        XCTAssertEqual(h.client.snapshot, state(4, "/green"))
        XCTAssertEqual(h.client.identity?.isViewer, true)
    }

    /// A room-scoped grant may not read STATS: the client never asks,
    /// so the daemon's refusal never reaches the user; its count is presence's.
    func test_roomScopedGrant_neverAsksStats_evenOnHeartbeats() {
        var h = Harness(.interactive(room: "lobby", token: "s3cret"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("OK 4", "YOU 3 kiosk view lobby", "STATE 4 /green", "SCREEN red red - none Red", "END", "END",
                  "STATE 4 /green")
        XCTAssertEqual(h.client.link, .live)
        XCTAssertEqual(h.takeSent(), [])
        h.advance(2000)
        XCTAssertEqual(h.takeSent(), ["PING"])
        h.receive("PONG")
        XCTAssertFalse(h.takeNotes().contains { if case .serverError = $0 { return true } else { return false } })
    }

    /// A connection that ends before the daemon said a single line
    /// carries the driver's hint (a TLS port reached without tls://); once a
    /// line came, the reason stays as it is.
    func test_silenceHint_onlyWhenNoLineCame() {
        var silent = Harness(.oneShot(room: nil, token: nil))
        silent.client.silenceHint = "if this address speaks TLS: use tls://h:1"
        silent.start()
        silent.connected()
        silent.submit(.get)
        _ = silent.takeAll()
        silent.ended("the daemon closed the connection")
        XCTAssertEqual(silent.client.link,
                       .stopped(reason: "the daemon closed the connection — if this address speaks TLS: use tls://h:1"))

        var spoken = Harness(watchOnly)
        spoken.client.silenceHint = "if this address speaks TLS: use tls://h:1"
        spoken.goLive()
        spoken.ended("the daemon closed the connection")
        guard case .waiting(_, _, let reason) = spoken.client.link else { return XCTFail("\(spoken.client.link)") }
        XCTAssertEqual(reason, "the daemon closed the connection")
    }

    /// A refusal of the client's own STATS (a grant narrowed by a
    /// reload) is no error of the user's: nothing is reported, polling stops.
    func test_statsRefused_isQuiet_andNotAskedAgain() {
        var h = Harness(.interactive(room: nil, token: "s3cret"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("OK 0", "YOU 3 ada control *", "SCREEN red red - none Red", "END", "END", "STATE 0 /red")
        XCTAssertEqual(h.takeSent(), ["STATS"])
        _ = h.takeAll()
        h.receive("ERR forbidden STATS needs a grant for every room")
        XCTAssertEqual(h.takeNotes(), [])
        h.advance(2000)
        XCTAssertEqual(h.takeSent(), ["PING"])
    }

    func test_sheetRoutes_inEventsAndSnapshots_carryTheSheets() {
        var h = Harness(.stream(room: nil, token: nil))
        h.goLive(rev: 2, route: "/red#blue:a%20note")
        XCTAssertEqual(h.client.snapshot?.sheets, [RouteEntry(screen: "blue", data: "a note")])
        h.receive("EVENT 3 present /red#blue:a%20note#green")
        XCTAssertEqual(h.takeNotes(), [.event(state(3, "/red#blue:a%20note#green"), op: "present")])
        h.receive("EVENT 4 dismiss /red#blue:a%20note")
        XCTAssertEqual(h.client.snapshot, state(4, "/red#blue:a%20note"))
    }

    func test_catalogLine_asksForScreensAndMessagesAgain_whenTheClientKeepsACatalog() {
        var h = Harness(.interactive(room: nil, token: nil))
        h.start()
        h.connected()
        h.receive("YOU 1 anon control *", "SCREEN red red green none Red", "END", "MESSAGE red Stop", "END", "STATE 1 /red",
                  "STAT watchers 1", "END")
        _ = h.takeAll()
        h.receive("CATALOG")
        XCTAssertEqual(h.takeSent(), ["SCREENS", "MESSAGES"])
        h.receive("SCREEN green green - none Green", "END")
        XCTAssertEqual(h.takeNotes(), [], "the catalog is reported whole, once its messages are in")
        h.receive("END")
        XCTAssertEqual(h.takeNotes(), [.catalog([CatalogEntry(name: "green", color: .green, next: nil, data: .none, title: "Green")])],
                       "red's message went with red")
        XCTAssertEqual(h.client.link, .live)

        var plain = Harness(.stream(room: nil, token: nil))
        plain.goLive()
        plain.receive("CATALOG")
        XCTAssertEqual(plain.takeAll(), [], "a client without a catalog has nothing to re-read")
    }

    func test_events_interleavedWithReplies_goToTheRightPlace() {
        var h = Harness(watchOnly)
        h.goLive(rev: 5, route: "/red")
        let get = h.submit(.get)
        let select = h.submit(.select(screen: "blue", data: "hi there"))
        XCTAssertEqual(h.takeSent(), ["GET", "SELECT blue hi there"])
        // Another client's change lands before our GET is answered.
        h.receive("EVENT 6 select /green",
                  "STATE 6 /green",
                  "OK 7",
                  "EVENT 7 select /blue:hi%20there")
        XCTAssertEqual(h.takeNotes(), [
            .event(state(6, "/green"), op: "select"),
            .reply(get, .state(state(6, "/green"))),
            .reply(select, .ok(revision: 7)),
            .event(state(7, "/blue:hi%20there"), op: "select"),
        ])
        XCTAssertEqual(h.client.snapshot?.revision, 7)
    }

    func test_eventsInsideAListing_areStillEvents() {
        var h = Harness(watchOnly)
        h.goLive()
        let id = h.submit(.screens)
        h.receive("SCREEN red red green none Red", "EVENT 1 push /red/blue", "SCREEN blue blue red optional Blue", "END")
        XCTAssertEqual(h.takeNotes(), [
            .event(state(1, "/red/blue"), op: "push"),
            .reply(id, .listing(["SCREEN red red green none Red", "SCREEN blue blue red optional Blue"])),
        ])
    }

    func test_errorReply_goesToItsRequest_andTheLinkStaysUp() {
        var h = Harness(watchOnly)
        h.goLive()
        let pop = h.submit(.pop)
        let list = h.submit(.screens)
        h.receive("ERR at-root the stack has one entry", "ERR auth-required log in first")
        XCTAssertEqual(h.takeNotes(), [
            .reply(pop, .error(ServerError(code: "at-root", message: "the stack has one entry",
                                           line: "ERR at-root the stack has one entry"))),
            .reply(list, .error(ServerError(code: "auth-required", message: "log in first",
                                            line: "ERR auth-required log in first"))),
        ])
        XCTAssertEqual(h.client.link, .live)
    }

    func test_staleEvent_isIgnored() {
        var h = Harness(watchOnly)
        h.goLive(rev: 9, route: "/blue")
        h.receive("EVENT 9 select /red", "EVENT 3 select /green")
        XCTAssertEqual(h.takeAll(), [])
        XCTAssertEqual(h.client.snapshot, state(9, "/blue"))
    }

    func test_gap_appliesTheEvent_andResyncsWithWatch_once() {
        var h = Harness(watchOnly)
        h.goLive(rev: 2, route: "/red")
        h.receive("EVENT 5 next /green", "EVENT 7 next /blue")
        XCTAssertEqual(h.takeNotes(), [
            .event(state(5, "/green"), op: "next"),
            .gap(expected: 3, received: 5),
            .event(state(7, "/blue"), op: "next"),
            .gap(expected: 6, received: 7),
        ])
        XCTAssertEqual(h.takeSent(), ["WATCH"], "one resync in flight at a time")
        h.receive("STATE 7 /blue", "EVENT 8 pop /red")
        XCTAssertEqual(h.takeNotes(), [
            .snapshot(state(7, "/blue"), .resync),
            .event(state(8, "/red"), op: "pop"),
        ])
        XCTAssertEqual(h.takeSent(), [])
    }

    func test_failedResync_doesNotBlockTheNextOne() {
        var h = Harness(watchOnly)
        h.goLive(rev: 1, route: "/red")
        h.receive("EVENT 3 select /green")
        XCTAssertEqual(h.takeSent(), ["WATCH"])
        h.receive("ERR internal something odd")
        h.receive("EVENT 5 select /blue")
        XCTAssertEqual(h.takeSent(), ["WATCH"], "the next gap resyncs again")
    }

    func test_unaskedState_isAResync() {
        var h = Harness(watchOnly)
        h.goLive(rev: 2, route: "/red")
        let id = h.submit(.select(screen: "green", data: nil))
        // A slow watcher's events were dropped; the daemon sends a fresh STATE.
        h.receive("STATE 40 /blue", "OK 41")
        XCTAssertEqual(h.takeNotes(), [
            .snapshot(state(40, "/blue"), .resync),
            .reply(id, .ok(revision: 41)),
        ])
    }

    func test_lostConnection_failsPending_waitsWithinBackoff_thenReconnects() {
        var h = Harness(watchOnly)
        h.goLive()
        let id = h.submit(.pop)
        XCTAssertEqual(h.takeSent(), ["POP"])
        h.ended("connection reset by peer")
        let actions = h.takeAll()
        XCTAssertEqual(actions.first, .disconnect)
        XCTAssertTrue(actions.contains(.note(.reply(id, .lost("connection reset by peer")))))
        guard case .waiting(let retryAt, let failures, let reason) = h.client.link else {
            return XCTFail("expected waiting, got \(h.client.link)")
        }
        XCTAssertEqual(failures, 1)
        XCTAssertEqual(reason, "connection reset by peer")
        XCTAssertTrue(ReconnectBackoff().bounds(failures: 1).contains(retryAt - h.now))
        XCTAssertEqual(h.client.nextWakeUp, retryAt)

        h.advance(retryAt - h.now - 1)
        XCTAssertEqual(h.takeAll(), [], "not before the retry time")
        h.advance(1)
        XCTAssertEqual(h.takeAll(), [.note(.link(.connecting(failures: 1))), .connect])
    }

    func test_repeatedFailures_growTheWait_upToTheCap_andSuccessResetsIt() {
        let backoff = ReconnectBackoff(initialMilliseconds: 100, maximumMilliseconds: 1000)
        var h = Harness(SyncClientOptions(watch: true, reconnect: true, backoff: backoff))
        h.start()
        var waits: [UInt64] = []
        for _ in 0..<8 {
            h.connectFailed()
            guard case .waiting(let retryAt, let failures, _) = h.client.link else { return XCTFail() }
            XCTAssertTrue(backoff.bounds(failures: failures).contains(retryAt - h.now))
            waits.append(retryAt - h.now)
            h.advance(retryAt - h.now)
        }
        XCTAssertTrue(waits.allSatisfy { $0 <= 1000 })
        XCTAssertGreaterThanOrEqual(waits.last!, 500, "capped steps stay at least half the cap")
        h.connected()
        h.receive("STATE 0 /red")
        XCTAssertEqual(h.client.link, .live)
        h.ended()
        guard case .waiting(_, let failures, _) = h.client.link else { return XCTFail() }
        XCTAssertEqual(failures, 1, "a successful sync starts the count again")
    }

    /// Loses the live connection of `h` and connects again, leaving the greeting unanswered.
    func reconnect(_ h: inout Harness) {
        h.ended()
        _ = h.takeAll()
        guard case .waiting(let retryAt, _, _) = h.client.link else { return XCTFail("not waiting: \(h.client.link)") }
        h.advance(retryAt - h.now)
        h.connected()
    }

    func test_reconnect_resyncsWhenAnsweredWithState_evenToALowerRevision() {
        var h = Harness(watchOnly)
        h.goLive(rev: 12, route: "/green/blue")
        XCTAssertNil(h.client.lastResume, "a first watch resumes nothing")
        reconnect(&h)
        XCTAssertEqual(h.takeSent(), ["WATCH 12"])
        // The daemon came back without its state file: revisions start over.
        h.receive("STATE 0 /red", "EVENT 1 select /blue")
        XCTAssertEqual(h.takeNotes(), [
            .link(.connecting(failures: 1)), .link(.handshaking),
            .snapshot(state(0, "/red"), .resync), .link(.live),
            .event(state(1, "/blue"), op: "select"),
        ])
        XCTAssertEqual(h.client.lastResume, .resynced)
    }

    func test_reconnect_continued_keepsTheSnapshot_andAppliesTheMissedEventsInOrder() {
        var h = Harness(.interactive(room: "lobby", token: nil))
        h.start()
        h.connected()
        h.receive("YOU 1 anon control *", "STATE 7 /red", "SCREEN red red - none Red", "END", "END", "STATE 7 /red",
                  "STAT watchers 1", "END")
        reconnect(&h)
        XCTAssertEqual(h.takeSent(), ["WHOAMI", "JOIN lobby", "SCREENS", "MESSAGES", "WATCH 7"])
        h.receive("YOU 2 anon control *", "STATE 9 /red/blue", "SCREEN red red - none Red", "END", "END",
                  "CONTINUE 7", "EVENT 8 push /red/blue", "EVENT 9 present /red/blue#green")
        let notes = h.takeNotes().filter { if case .catalog = $0 { return false } else { return true } }
        XCTAssertEqual(notes, [
            .link(.connecting(failures: 1)), .link(.handshaking),
            .identity(Identity(id: "2", name: "anon", role: "control", rooms: "*")),
            .continued(after: 7), .link(.live),
            .event(state(8, "/red/blue"), op: "push"),
            .event(state(9, "/red/blue#green"), op: "present"),
        ])
        XCTAssertEqual(h.client.lastResume, .continued)
        XCTAssertEqual(h.client.snapshot, state(9, "/red/blue#green"))
        XCTAssertEqual(h.takeSent(), ["STATS"], "nothing missed, nothing to ask again but the figures")
    }

    func test_reconnect_continuedAlone_isLiveAtTheSameRevision() {
        var h = Harness(watchOnly)
        h.goLive(rev: 3, route: "/red")
        reconnect(&h)
        _ = h.takeAll()
        h.receive("CONTINUE 3")
        XCTAssertEqual(h.takeNotes(), [.continued(after: 3), .link(.live)])
        XCTAssertEqual(h.client.snapshot, state(3, "/red"))
        h.receive("EVENT 4 push /red/blue")
        XCTAssertEqual(h.takeNotes(), [.event(state(4, "/red/blue"), op: "push")])
    }

    func test_reconnect_continuedFromAnotherRevision_asksForAWholeSnapshot() {
        var h = Harness(watchOnly)
        h.goLive(rev: 3, route: "/red")
        reconnect(&h)
        _ = h.takeAll()
        h.receive("CONTINUE 2")
        XCTAssertEqual(h.takeSent(), ["WATCH"])
        h.receive("STATE 5 /blue")
        XCTAssertEqual(h.takeNotes(), [.continued(after: 2), .link(.live), .snapshot(state(5, "/blue"), .resync)])
    }

    func test_reconnect_toAVersion1Daemon_fallsBackToAPlainWatch() {
        var h = Harness(watchOnly)
        h.goLive(rev: 3, route: "/red")
        reconnect(&h)
        _ = h.takeAll()
        h.receive("ERR bad-args WATCH takes no argument")
        XCTAssertEqual(h.takeSent(), ["WATCH"])
        XCTAssertEqual(h.client.link, .handshaking, "the refusal is not the end of the greeting")
        h.receive("STATE 3 /red")
        XCTAssertEqual(h.takeNotes(), [.snapshot(state(3, "/red"), .connected), .link(.live)])
        XCTAssertEqual(h.client.lastResume, .resynced, "a fresh watch is a resync, whatever the last reconnect was")
    }

    func test_messages_refusedByAVersion1Daemon_meanNoMessages_notAFailure() {
        var h = Harness(.interactive(room: nil, token: nil))
        h.start()
        h.connected()
        _ = h.takeAll()
        // A daemon before 1.2 knows neither WHOAMI nor MESSAGES.
        h.receive("ERR unknown-command WHOAMI", "SCREEN red red - none Red", "END", "ERR unknown-command MESSAGES",
                  "STATE 0 /red")
        XCTAssertEqual(h.takeNotes(), [
            .identity(nil),
            .catalog([CatalogEntry(name: "red", color: .red, next: nil, data: .none, title: "Red")]),
            .snapshot(state(0, "/red"), .connected), .link(.live),
        ])
    }

    func test_messageLine_readsNameAndTheRestOfTheLine_andRefusesOthers() {
        XCTAssertEqual(CatalogEntry.message(fromLine: "MESSAGE red Stop  here, please")?.message, "Stop  here, please")
        XCTAssertEqual(CatalogEntry.message(fromLine: "MESSAGE red Stop")?.screen, "red")
        for line in ["MESSAGE red", "MESSAGE", "SCREEN red red - none Red", "MESSAGES red x", ""] {
            XCTAssertNil(CatalogEntry.message(fromLine: line), line)
        }
    }

    func test_heartbeat_pingsWhenDue_andASilentPeerIsDropped() {
        var h = Harness(SyncClientOptions(watch: true, reconnect: true, heartbeatMilliseconds: 2000,
                                          replyTimeoutMilliseconds: 3000))
        h.goLive()
        h.advance(1999)
        XCTAssertEqual(h.takeSent(), [])
        h.advance(1)
        XCTAssertEqual(h.takeSent(), ["PING"])
        h.receive("PONG")
        XCTAssertEqual(h.client.link, .live)
        XCTAssertEqual(h.client.nextWakeUp, h.now + 2000)
        h.advance(2000)
        XCTAssertEqual(h.takeSent(), ["PING"])
        XCTAssertEqual(h.client.nextWakeUp, h.now + 3000, "while a PING is unanswered only its timeout matters")
        h.advance(2999)
        XCTAssertEqual(h.client.link, .live)
        h.advance(1)
        let actions = h.takeAll()
        XCTAssertEqual(actions.first, .disconnect)
        guard case .waiting(_, _, let reason) = h.client.link else { return XCTFail() }
        XCTAssertEqual(reason, "no reply for 3s")
    }

    func test_heartbeat_carriesStats_whenAskedTo() {
        var h = Harness(.interactive(room: nil, token: nil))
        h.start()
        h.connected()
        h.receive("YOU 1 anon control *", "SCREEN red red - none Red", "END", "END", "STATE 0 /red", "STAT watchers 1", "END")
        _ = h.takeAll()
        h.advance(2000)
        XCTAssertEqual(h.takeSent(), ["PING", "STATS"])
        h.receive("PONG", "STAT watchers 2", "END")
        XCTAssertEqual(h.client.watchers, 2)
    }

    func test_connectTimeout_abandonsTheAttempt() {
        var h = Harness(SyncClientOptions(watch: true, reconnect: true, connectTimeoutMilliseconds: 500))
        h.start()
        _ = h.takeAll()
        XCTAssertEqual(h.client.nextWakeUp, h.now + 500)
        h.advance(500)
        XCTAssertEqual(h.takeAll().first, .disconnect)
        guard case .waiting(_, 1, let reason) = h.client.link else { return XCTFail("\(h.client.link)") }
        XCTAssertEqual(reason, "no connection after 0.5s")
    }

    func test_wrongToken_stopsForGood_andReportsTheErrLine() {
        var h = Harness(.stream(room: nil, token: "nope"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("ERR auth-failed wrong token", "ERR auth-required authenticate first")
        let error = ServerError(code: "auth-failed", message: "wrong token", line: "ERR auth-failed wrong token")
        XCTAssertEqual(h.takeAll(), [.disconnect, .note(.serverError(error)), .note(.link(.stopped(reason: error.line)))])
        XCTAssertNil(h.client.nextWakeUp)
    }

    func test_oneShot_queuesUntilConnected_thenPipelinesAfterTheGreeting() {
        var h = Harness(.oneShot(room: "lab", token: "t"))
        let id = h.submit(.push(screen: "blue", data: "a b"))
        h.start()
        h.connected()
        XCTAssertEqual(h.takeSent(), ["AUTH t", "JOIN lab", "PUSH blue a b"])
        h.receive("OK 3", "STATE 3 /red", "OK 4")
        XCTAssertEqual(h.takeNotes(), [.link(.connecting(failures: 0)), .link(.handshaking), .link(.live),
                                       .reply(id, .ok(revision: 4))])
    }

    func test_oneShot_withoutGreeting_isLiveAtOnce() {
        var h = Harness(.oneShot(room: nil, token: nil))
        let id = h.submit(.get)
        h.start()
        h.connected()
        XCTAssertEqual(h.client.link, .live)
        XCTAssertEqual(h.takeSent(), ["GET"])
        h.receive("STATE 2 /green/blue")
        XCTAssertEqual(h.takeNotes().last, .reply(id, .state(state(2, "/green/blue"))))
    }

    func test_oneShot_unreachable_stops_andLosesTheRequest() {
        var h = Harness(.oneShot(room: nil, token: nil))
        let id = h.submit(.root)
        h.start()
        h.connectFailed("connection refused")
        XCTAssertEqual(h.takeNotes(), [.link(.connecting(failures: 0)), .reply(id, .lost("connection refused")),
                                       .link(.stopped(reason: "connection refused"))])
    }

    func test_stream_neverConnected_stopsAfterOneAttempt() {
        var h = Harness(.stream(room: nil, token: nil))
        h.start()
        h.connectFailed("connection refused")
        XCTAssertEqual(h.client.link, .stopped(reason: "connection refused"))
        XCTAssertFalse(h.client.hasConnected)
        XCTAssertNil(h.client.nextWakeUp)
    }

    func test_stream_withRetry_neverConnected_keepsTrying() {
        var h = Harness(.stream(room: nil, token: nil, retry: true))
        h.start()
        h.connectFailed("connection refused")
        guard case .waiting(_, 1, "connection refused") = h.client.link else {
            return XCTFail("expected waiting, got \(h.client.link)")
        }
    }

    func test_stream_onceConnected_reconnectsWithoutRetry() {
        var h = Harness(.stream(room: nil, token: nil))
        h.goLive()
        XCTAssertTrue(h.client.hasConnected)
        h.ended("connection reset by peer")
        guard case .waiting = h.client.link else { return XCTFail("expected waiting, got \(h.client.link)") }
        // Later failed attempts keep it retrying: it has been connected before.
        h.advance(5000)
        h.connectFailed("connection refused")
        guard case .waiting(_, 2, _) = h.client.link else { return XCTFail("expected waiting, got \(h.client.link)") }
    }

    func test_oneShot_withRetry_keepsTheUnsentRequest_untilTheDaemonAnswers() {
        var h = Harness(.oneShot(room: nil, token: nil, retry: true))
        let id = h.submit(.pop)
        h.start()
        h.connectFailed("connection refused")
        XCTAssertFalse(h.takeNotes().contains(.reply(id, .lost("connection refused"))), "never sent, so not lost")
        h.advance(5000)
        h.connected()
        XCTAssertEqual(h.takeSent(), ["POP"])
        h.receive("OK 1")
        XCTAssertEqual(h.takeNotes().last, .reply(id, .ok(revision: 1)))
        // Sent once and then lost: reported, never sent again.
        let second = h.submit(.pop)
        _ = h.takeSent()
        h.ended("connection reset by peer")
        XCTAssertTrue(h.takeNotes().contains(.reply(second, .lost("connection reset by peer"))))
    }

    func test_byeBeforeClose_namesTheReason() {
        var h = Harness(watchOnly)
        h.goLive()
        h.receive("BYE")
        XCTAssertEqual(h.takeAll(), [])
        h.ended("the daemon closed the connection")
        guard case .waiting(_, _, let reason) = h.client.link else { return XCTFail() }
        XCTAssertEqual(reason, "the daemon shut down")
    }

    func test_busy_isReported_andNamesTheReason() {
        var h = Harness(watchOnly)
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("ERR busy too many connections")
        XCTAssertEqual(h.takeNotes(), [.serverError(ServerError(code: "busy", message: "too many connections",
                                                                line: "ERR busy too many connections"))])
        h.ended()
        guard case .waiting(_, _, let reason) = h.client.link else { return XCTFail() }
        XCTAssertEqual(reason, "the daemon is busy: too many connections")
    }

    func test_greetingRefused_stops_insteadOfRetryingForever() {
        var h = Harness(watchOnly)
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("ERR auth-required this daemon wants AUTH <token> first")
        XCTAssertEqual(h.takeAll().first, .disconnect)
        XCTAssertEqual(h.client.link, .stopped(reason: "ERR auth-required this daemon wants AUTH <token> first"))
    }

    func test_tokenForADaemonWithoutOne_isReported_butNotFatal() {
        var h = Harness(.stream(room: nil, token: "spare"))
        h.start()
        h.connected()
        _ = h.takeAll()
        h.receive("ERR bad-args no token is configured", "STATE 1 /green")
        XCTAssertEqual(h.takeNotes(), [
            .serverError(ServerError(code: "bad-args", message: "no token is configured",
                                     line: "ERR bad-args no token is configured")),
            .snapshot(state(1, "/green"), .connected), .link(.live),
        ])
    }

    func test_submitWhileDisconnected_isLostAtOnce_notReplayedLater() {
        var h = Harness(watchOnly)
        h.goLive()
        h.ended("gone")
        _ = h.takeAll()
        let id = h.submit(.next(data: nil))
        XCTAssertEqual(h.takeAll(), [.note(.reply(id, .lost("not connected: gone")))])
    }

    func test_requestThatCannotBeOneLine_isRefusedLocally() {
        var h = Harness(watchOnly)
        h.goLive()
        let id = h.submit(.push(screen: "blue", data: "two\nlines"))
        XCTAssertEqual(h.takeAll(), [.note(.reply(id, .invalid("data cannot contain a line break")))])
    }

    func test_stop_closes_andLosesPending() {
        var h = Harness(watchOnly)
        h.goLive()
        let id = h.submit(.get)
        XCTAssertEqual(h.takeSent(), ["GET"])
        h.actions += h.client.stop(now: h.now)
        XCTAssertEqual(h.takeAll(), [.note(.reply(id, .lost("closed"))), .disconnect, .note(.link(.stopped(reason: "closed")))])
        h.receive("STATE 0 /red")
        XCTAssertEqual(h.takeAll(), [], "nothing is read after stop")
    }
}
