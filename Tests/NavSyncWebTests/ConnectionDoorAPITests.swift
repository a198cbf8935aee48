import NavSyncCore
import NavSyncWeb
import UVLoop
import XCTest

/// The HTTP API's request rules at the door, with a fake hub behind the
/// port: what is refused before a body is read (and closes), how a change
/// goes up as its line and its answer comes back, and how an events
/// stream goes up as `WATCH` and its lines come down as events.
final class ConnectionDoorAPITests: XCTestCase {
    private var harness: DoorHarness!
    private let blue = RoomState(stack: [RouteEntry(screen: "red"), RouteEntry(screen: "blue", data: "hi")], revision: 4)

    override func setUpWithError() throws { harness = try DoorHarness() }

    override func tearDown() {
        harness?.tearDown()
        harness = nil
    }

    private func post(_ body: String, room: String = "hall", headers: String = "Content-Type: application/json\r\n",
                      length: Int? = nil) -> String {
        "POST /rooms/\(room) HTTP/1.1\r\nHost: 127.0.0.1:7878\r\n\(headers)"
            + "Content-Length: \(length ?? body.utf8.count)\r\n\r\n\(body)"
    }

    private func answers() -> [HTTPWire.Response] { HTTPWire.responses(harness.stream.takeWritten()) }

    /// Loop turns that do not wait (the next request runs on the turn after an
    /// answer), at most a bounded number.
    private func turns(until condition: () -> Bool) {
        for _ in 0..<1000 where !condition() { harness.loop.runOnce(nowait: true) }
    }

    // MARK: POST /rooms/NAME

    func test_post_change_goesUpAsItsLine_andTheOKComesBackAsTheDocument() throws {
        harness.hub.rooms["hall"] = blue
        harness.stream.peerSends(post(#"{"op":"push","screen":"blue","data":"hi"}"#))
        XCTAssertEqual(harness.upText, "PUSH blue hi\n")
        XCTAssertEqual(harness.hub.acted.map(\.room), ["hall"])
        XCTAssertEqual(answers().count, 0, "nothing is answered before the hub")
        harness.door.write([Array("OK 4\n".utf8)])
        let answer = try XCTUnwrap(answers().first)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.headers["etag"], "\"4\"")
        XCTAssertEqual(answer.bodyText, #"{"room":"hall","rev":4,"route":"/red/blue:hi","stack":[{"screen":"red"},"#
                       + #"{"screen":"blue","data":"hi"}],"sheets":[]}"#)
        XCTAssertNil(answer.headers["connection"])
    }

    func test_post_ifMatch_goesUpAsIF_andAConflictIs412WithCurrent() throws {
        harness.stream.peerSends(post(#"{"op":"pop"}"#, headers: "Content-Type: application/json\r\nIf-Match: \"3\"\r\n"))
        XCTAssertEqual(harness.upText, "IF 3 POP\n")
        harness.door.write([Array("ERR conflict current=4\n".utf8)])
        let answer = try XCTUnwrap(answers().first)
        XCTAssertEqual(answer.status, 412)
        XCTAssertEqual(answer.headers["etag"], "\"4\"")
        XCTAssertEqual(answer.bodyText, #"{"error":"conflict","current":4}"#)
    }

    func test_post_theLineProtocolsRefusal_is422_unavailable503() {
        harness.stream.peerSends(post(#"{"op":"push","screen":"purple"}"#))
        harness.door.write([Array("ERR unknown-screen no screen named 'purple'; see SCREENS\n".utf8)])
        harness.stream.peerSends(post(#"{"op":"pop"}"#))
        turns(until: { self.harness.upText.hasSuffix("POP\n") })
        harness.door.write([Array("ERR unavailable backplane down\n".utf8)])
        let all = answers()
        XCTAssertEqual(all.map(\.status), [422, 503])
        XCTAssertEqual(all.first?.bodyText, #"{"error":"unknown-screen","message":"no screen named 'purple'; see SCREENS"}"#)
    }

    func test_post_nothingMoreIsReadWhileTheChangeIsDecided() {
        harness.stream.peerSends(post(#"{"op":"pop"}"#))
        XCTAssertFalse(harness.stream.isReading, "pipelined requests wait in the socket")
        harness.door.write([Array("OK 1\n".utf8)])
        XCTAssertTrue(harness.stream.isReading)
    }

    func test_post_keepAlive_theNextRequestWaitsForTheAnswer() {
        harness.hub.rooms["hall"] = blue
        harness.stream.peerSends(post(#"{"op":"pop"}"#) + HTTPWire.get("/rooms/hall"))
        XCTAssertEqual(answers().count, 0, "the GET is not answered before the POST")
        harness.door.write([Array("OK 4\n".utf8)])
        turns(until: { HTTPWire.responses(self.harness.stream.written).count == 2 })
        XCTAssertEqual(answers().map(\.status), [200, 200])
    }

    func test_post_refusedBeforeItsBody_isClosed_andTheBodyNeverGoesUp() {
        let smuggled = HTTPWire.get("/rooms/hall")
        let cases: [(String, Int)] = [
            (post(smuggled, headers: "Content-Type: text/plain\r\n"), 415),
            (post(smuggled, headers: ""), 415),
            (post(smuggled, headers: "Content-Type: application/json\r\nOrigin: http://evil.example\r\n"), 403),
            (post(smuggled, length: 9000), 413),
            ("POST /rooms/hall HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nContent-Type: application/json\r\n\r\n" + smuggled, 411),
            ("POST /rooms/hall HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Content-Length: 5\r\n\r\n" + smuggled, 411),
            (post(smuggled, room: "bad!name"), 400),
            ("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nContent-Length: 3\r\n\r\nabc", 405),
        ]
        for (request, status) in cases {
            let one = try! DoorHarness()
            defer { one.tearDown() }
            one.stream.peerSends(request)
            let all = HTTPWire.responses(one.stream.takeWritten())
            XCTAssertEqual(all.map(\.status), [status], request)
            XCTAssertEqual(all.first?.headers["connection"], "close", request)
            XCTAssertEqual(one.up, [], request)
            XCTAssertFalse(one.hub.finishedBecause.isEmpty, request)
        }
    }

    func test_post_credentialAndGrant_areJudgedBeforeTheBody_andClose() {
        harness.hub.token = "sesame"
        harness.stream.peerSends(post(#"{"op":"pop"}"#))
        XCTAssertEqual(answers().map { [$0.status: $0.headers["connection"] ?? ""] }, [[401: "close"]])
        let viewer = try! DoorHarness()
        defer { viewer.tearDown() }
        viewer.hub.grant = Grant(role: .view, rooms: .every, name: "wall")
        viewer.stream.peerSends(post(#"{"op":"pop"}"#, headers: "Content-Type: application/json\r\nAuthorization: Bearer wall\r\n"))
        let refused = HTTPWire.responses(viewer.stream.takeWritten())
        XCTAssertEqual(refused.map(\.status), [403], "a view token, judged")
        XCTAssertTrue(refused.first?.bodyText.contains(#""error":"forbidden""#) ?? false)
        XCTAssertEqual(viewer.up, [])
        // No token where the anonymous role is view: a credential is needed.
        let anonymous = try! DoorHarness()
        defer { anonymous.tearDown() }
        anonymous.hub.grant = Grant(role: .view, rooms: .every, name: "anon")
        anonymous.stream.peerSends(post(#"{"op":"pop"}"#))
        let challenged = HTTPWire.responses(anonymous.stream.takeWritten())
        XCTAssertEqual(challenged.map { [$0.status: $0.headers["connection"] ?? ""] }, [[401: "close"]])
        XCTAssertTrue(challenged.first?.bodyText.contains(#""error":"auth-required""#) ?? false)
        XCTAssertEqual(anonymous.up, [])
    }

    func test_post_badBody_is400_andTheConnectionStays() {
        harness.stream.peerSends(post(#"{"op":"pop",}"#) + post(#"{"op":"pop"}"#, headers: "Content-Type: application/json\r\nIf-Match: 3\r\n"))
        let all = answers()
        XCTAssertEqual(all.map(\.status), [400, 400])
        XCTAssertNil(all.first?.headers["connection"])
        XCTAssertEqual(harness.up, [])
        XCTAssertTrue(harness.hub.finishedBecause.isEmpty)
    }

    func test_post_bodyByteAtATime_goesUpWhole() {
        for byte in Array(post(#"{"op":"select","screen":"green"}"#).utf8) { harness.stream.peerSends([byte]) }
        XCTAssertEqual(harness.upText, "SELECT green\n")
    }

    func test_post_expectContinue_onlyOnceTheChecksPassed() {
        let head = "POST /rooms/hall HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nContent-Type: application/json\r\n"
            + "Expect: 100-continue\r\nContent-Length: 12\r\n\r\n"
        harness.stream.peerSends(head)
        XCTAssertEqual(String(decoding: harness.stream.takeWritten(), as: UTF8.self), "HTTP/1.1 100 Continue\r\n\r\n")
        harness.stream.peerSends(#"{"op":"pop"}"#)
        XCTAssertEqual(harness.upText, "POP\n")
    }

    func test_post_storeAway_is503_beforeTheBody() {
        harness.hub.storeIsAvailable = false
        harness.stream.peerSends(post(#"{"op":"pop"}"#))
        XCTAssertEqual(answers().map(\.status), [503])
        XCTAssertEqual(harness.up, [])
    }

    // MARK: GET

    func test_get_room_ETag_andIfNoneMatch() {
        harness.hub.rooms["hall"] = blue
        harness.stream.peerSends(HTTPWire.get("/rooms/hall") + HTTPWire.get("/rooms/hall", "If-None-Match: \"4\"\r\n")
                                 + HTTPWire.get("/rooms/hall", "If-None-Match: \"3\"\r\n"))
        let all = answers()
        XCTAssertEqual(all.map(\.status), [200, 304, 200])
        XCTAssertEqual(all.map { $0.headers["etag"] }, ["\"4\"", "\"4\"", "\"4\""])
        XCTAssertEqual(all[1].body, [])
        XCTAssertEqual(all[0].headers["cache-control"], "no-cache")
    }

    func test_get_members_inWHOsOrder() {
        harness.hub.members["hall"] = [Member(id: "7", name: "ada", role: .control), Member(id: "9", name: "wall-1", role: .view, at: "/red")]
        harness.stream.peerSends(HTTPWire.get("/rooms/hall/members"))
        XCTAssertEqual(answers().first?.bodyText, #"{"room":"hall","members":[{"id":"7","name":"ada","role":"control","at":null},"#
                       + #"{"id":"9","name":"wall-1","role":"view","at":"/red"}]}"#)
    }

    func test_options_is405_withoutAnyCORSHeader() {
        harness.stream.peerSends("OPTIONS /rooms/hall HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nOrigin: http://evil.example\r\n"
                                 + "Access-Control-Request-Method: POST\r\n\r\n")
        let answer = answers().first
        XCTAssertEqual(answer?.status, 405)
        XCTAssertEqual(answer?.headers["allow"], "GET, HEAD, POST")
        XCTAssertFalse(answer?.headers.keys.contains { $0.hasPrefix("access-control") } ?? true)
    }

    // MARK: Events

    func test_events_goUpAsWATCH_andLinesComeDownAsEvents() {
        harness.stream.peerSends(HTTPWire.get("/rooms/hall/events?since=2&name=wall-1", "Last-Event-ID: 3\r\n"))
        XCTAssertEqual(harness.upText, "NAME wall-1\nWATCH 3\n")
        let head = String(decoding: harness.stream.takeWritten(), as: UTF8.self)
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 200 OK\r\n"), head)
        XCTAssertTrue(head.contains("Content-Type: text/event-stream\r\n"), head)
        XCTAssertTrue(head.hasSuffix("\r\n\r\nretry: 2000\n\n"), head)
        harness.door.write([Array("OK 3\nCONTINUE 3\nEVENT 4 pop /red\n".utf8)])
        XCTAssertEqual(String(decoding: harness.stream.takeWritten(), as: UTF8.self),
                       "id: 4\nevent: change\ndata: {\"rev\":4,\"op\":\"pop\",\"route\":\"/red\"}\n\n")
    }

    func test_events_aRoomsTurn_isMadeIntoEventsOnceForEveryStream() throws {
        let second = try DoorHarness(sharing: harness)
        defer { second.tearDown() }
        for one in [harness!, second] {
            one.stream.peerSends(HTTPWire.get("/rooms/hall/events"))
            _ = one.stream.takeWritten()
        }
        let turn = SharedBytes(Array("EVENT 5 push /red/blue\n".utf8))
        harness.door.write(shared: turn)
        second.door.write(shared: turn)
        let first = try XCTUnwrap(harness.stream.sharedWrites.last)
        XCTAssertTrue(first === second.stream.sharedWrites.last, "one buffer of events for both streams")
        XCTAssertEqual(String(decoding: harness.stream.takeWritten(), as: UTF8.self),
                       "id: 5\nevent: change\ndata: {\"rev\":5,\"op\":\"push\",\"route\":\"/red/blue\"}\n\n")
    }

    func test_events_fromAnAllowedOrigin_echoTheOrigin_withoutOne_sayNothingOfCORS() throws {
        let allowed = try DoorHarness(allowedOrigins: ["https://ops.example"])
        defer { allowed.tearDown() }
        allowed.stream.peerSends(HTTPWire.get("/rooms/hall/events", "Origin: https://ops.example\r\n"))
        let head = String(decoding: allowed.stream.takeWritten(), as: UTF8.self)
        XCTAssertTrue(head.contains("\r\nAccess-Control-Allow-Origin: https://ops.example\r\nVary: Origin\r\n"), head)
        harness.stream.peerSends(HTTPWire.get("/rooms/hall/events"))
        XCTAssertFalse(String(decoding: harness.stream.takeWritten(), as: UTF8.self).contains("Access-Control"))
    }

    func test_events_tokenFromTheQuery_onThisPathOnly() {
        harness.hub.token = "sesame"
        harness.stream.peerSends(HTTPWire.get("/rooms/hall?token=sesame") + HTTPWire.get("/rooms/hall/events?token=sesame"))
        XCTAssertEqual(harness.hub.bearers, [nil, "sesame"])
        XCTAssertEqual(harness.hub.acted.map(\.token), ["sesame"], "the stream holds the token, so revoking it ends the stream")
        XCTAssertEqual(harness.upText, "WATCH\n")
    }

    func test_events_refusals() {
        let cases: [(String, Int)] = [
            (HTTPWire.get("/rooms/hall/events?since=x"), 400),
            (HTTPWire.get("/rooms/hall/events?name=a%20b"), 400),
            (HTTPWire.get("/rooms/hall/events", "Origin: http://evil.example\r\n"), 403),
        ]
        for (request, status) in cases {
            let one = try! DoorHarness()
            defer { one.tearDown() }
            one.stream.peerSends(request)
            XCTAssertEqual(HTTPWire.responses(one.stream.takeWritten()).first?.status, status, request)
            XCTAssertEqual(one.up, [], request)
        }
    }

    func test_events_head_is405_allowingGETOnly() {
        harness.stream.peerSends("HEAD /rooms/hall/events HTTP/1.1\r\nHost: 127.0.0.1:7878\r\n\r\n")
        let head = String(decoding: harness.stream.takeWritten(), as: UTF8.self)
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 405 "), head)
        XCTAssertTrue(head.contains("\r\nAllow: GET\r\n"), head)
        XCTAssertEqual(harness.up, [])
    }

    func test_events_pingAfterSilence_andNotWhileEventsFlow() throws {
        let quiet = try DoorHarness(eventPingMilliseconds: 30)
        defer { quiet.tearDown() }
        quiet.stream.peerSends(HTTPWire.get("/rooms/hall/events"))
        _ = quiet.stream.takeWritten()
        quiet.runLoop(until: { quiet.stream.written.count > 0 })
        XCTAssertEqual(String(decoding: quiet.stream.takeWritten(), as: UTF8.self), ": ping\n\n")
        quiet.door.write([Array("EVENT 1 pop /red\n".utf8)])
        XCTAssertTrue(String(decoding: quiet.stream.takeWritten(), as: UTF8.self).hasPrefix("id: 1\n"),
                      "an event, not a ping, right after it")
    }

    func test_events_revocation_isADeniedEvent() {
        harness.stream.peerSends(HTTPWire.get("/rooms/hall/events"))
        _ = harness.stream.takeWritten()
        harness.door.write([Array("ERR forbidden token revoked\nBYE\n".utf8)])
        XCTAssertEqual(String(decoding: harness.stream.takeWritten(), as: UTF8.self),
                       "event: denied\ndata: {\"error\":\"forbidden\",\"message\":\"token revoked\"}\n\n")
    }
}
