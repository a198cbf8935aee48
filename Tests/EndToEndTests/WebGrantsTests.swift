import Foundation
import Glibc
import XCTest

/// The HTTP and WebSocket doors with each kind of token: the same
/// grants as the line protocol.
final class WebGrantsTests: XCTestCase {
    private let presenter = DaemonGrantsTests.presenter
    private let screen = DaemonGrantsTests.screen
    private let deskControl = DaemonGrantsTests.deskControl
    private let deskView = DaemonGrantsTests.deskView

    private func daemon(_ dir: TemporaryDirectory, extra: [String] = []) throws -> (DaemonProcess, String) {
        let path = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(path, 0o600)
        return (try DaemonProcess(arguments: ["--tokens", path] + extra, state: "none"), path)
    }

    private func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// Changes `main` and `lobby`, so both have state to list.
    private func seed(_ daemon: DaemonProcess) throws {
        let c = try daemon.connect()
        XCTAssertEqual(try c.request("AUTH \(presenter)"), "OK 0")
        XCTAssertEqual(try c.request("SELECT green"), "OK 1")
        XCTAssertTrue(try c.request("JOIN lobby").hasPrefix("STATE "))
        XCTAssertEqual(try c.request("PUSH blue"), "OK 1")
        c.close()
    }

    func test_http_eachKindOfToken_onMetricsRoomsAndARoom() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir)
        defer { daemon.stop() }
        try seed(daemon)
        let web = try daemon.connect()
        // No token: 401 everywhere that shows state; the page stays open.
        for path in ["/metrics", "/rooms", "/rooms/main"] {
            XCTAssertEqual(try web.get(path).status, 401, path)
        }
        XCTAssertEqual(try web.get("/").status, 200)
        XCTAssertEqual(try web.get("/healthz").status, 200)
        // Every-room grants, either role.
        for token in [presenter, screen] {
            XCTAssertEqual(try web.get("/metrics", headers: bearer(token)).status, 200)
            XCTAssertEqual(try web.get("/rooms/main", headers: bearer(token)).status, 200)
            XCTAssertEqual(try web.get("/rooms", headers: bearer(token)).text,
                           #"{"rooms":[{"room":"lobby","rev":1},{"room":"main","rev":1}]}"#)
        }
        // List grants: their rooms only.
        for token in [deskControl, deskView] {
            XCTAssertEqual(try web.get("/metrics", headers: bearer(token)).status, 403)
            XCTAssertEqual(try web.get("/rooms/main", headers: bearer(token)).status, 403)
            XCTAssertEqual(try web.get("/rooms/bad!", headers: bearer(token)).status, 403)
            let lobby = try web.get("/rooms/lobby", headers: bearer(token))
            XCTAssertEqual(lobby.status, 200)
            XCTAssertTrue(lobby.text.hasPrefix(#"{"room":"lobby","rev":1,"route":"/red/blue""#), lobby.text)
            XCTAssertEqual(try web.get("/rooms", headers: bearer(token)).text, #"{"rooms":[{"room":"lobby","rev":1}]}"#)
        }
        XCTAssertEqual(try web.get("/rooms/bad!", headers: bearer(presenter)).status, 400)
    }

    func test_http_thirdWrongBearer_closesAfterIts401() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir)
        defer { daemon.stop() }
        let web = try daemon.connect()
        XCTAssertEqual(try web.get("/metrics", headers: bearer("wrong-token-00000000001")).status, 401)
        // A request with no header at all is no failure.
        XCTAssertEqual(try web.get("/metrics").status, 401)
        XCTAssertEqual(try web.get("/rooms", headers: bearer("wrong-token-00000000002")).status, 401)
        XCTAssertEqual(try web.get("/metrics", headers: bearer(presenter)).status, 200)
        let third = try web.get("/rooms/main", headers: bearer("wrong-token-00000000003"))
        XCTAssertEqual(third.status, 401)
        XCTAssertEqual(try web.readUntilClosed(), [])
        let stats = try { () throws -> [String] in
            let c = try daemon.connect()
            _ = try c.request("AUTH \(presenter)")
            return try c.requestList("STATS")
        }()
        XCTAssertTrue(stats.contains("STAT auth_failures 3"), "\(stats)")
    }

    func test_http_anonymousView_opensRooms() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir, extra: ["--anonymous", "view"])
        defer { daemon.stop() }
        try seed(daemon)
        let web = try daemon.connect()
        XCTAssertEqual(try web.get("/rooms/lobby").status, 200)
        XCTAssertEqual(try web.get("/rooms").text, #"{"rooms":[{"room":"lobby","rev":1},{"room":"main","rev":1}]}"#)
        // A wrong token is still a failure, not the anonymous role.
        XCTAssertEqual(try web.get("/rooms", headers: bearer("wrong-token-00000000001")).status, 401)
        // A list token sees its list, even where anonymous would see more.
        XCTAssertEqual(try web.get("/rooms/main", headers: bearer(deskView)).status, 403)
    }

    /// HTTP-API.md: a POST needs a control grant or `--anonymous control`;
    /// with no credential where one is needed the answer is 401 with a
    /// Bearer challenge (so a script or page knows to offer a token), and
    /// 403 only for a token that was judged and does not allow the change.
    func test_http_anonymousView_postWithoutToken_is401_withAViewToken403() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try daemon(dir, extra: ["--anonymous", "view"])
        defer { daemon.stop() }
        let body = #"{"op":"select","screen":"green"}"#
        func post(_ extra: [(String, String)]) throws -> HTTPReply {
            let web = try daemon.connect()
            defer { web.close() }
            web.sendRequest("POST", "/rooms/lobby", headers: [("Content-Type", "application/json")] + extra, body: body)
            return try web.readReply()
        }
        let anonymous = try post([])
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.headers["www-authenticate"], #"Bearer realm="navsync""#)
        XCTAssertEqual(anonymous.headers["connection"], "close")
        XCTAssertTrue(anonymous.text.hasPrefix(#"{"error":"auth-required","message":"#), anonymous.text)
        XCTAssertEqual(try post(bearer(screen)).status, 403, "a view token, judged: forbidden")
        XCTAssertEqual(try post(bearer(presenter)).status, 200)
        let stats = try { () throws -> [String] in
            let c = try daemon.connect()
            _ = try c.request("AUTH \(presenter)")
            return try c.requestList("STATS")
        }()
        XCTAssertTrue(stats.contains("STAT auth_failures 0"), "no credential is no failure: \(stats)")
    }

    /// HTTP-API.md: a stream that loses its access gets `event: denied`
    /// and the daemon closes it — for a revoked room too, which leaves a
    /// line connection open (it may `JOIN`) but leaves a stream nothing.
    func test_events_roomRevokedByAReload_deniedThenClosed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, path) = try daemon(dir)
        defer { daemon.stop() }
        let stream = try daemon.connect()
        stream.sendRequest("GET", "/rooms/hall/events", headers: bearer(deskControl))
        let head = try stream.readReply(headOnly: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-type"], "text/event-stream")
        XCTAssertEqual(try stream.readLines(5), ["retry: 2000", "", "id: 0", "event: state",
                                                 #"data: {"room":"hall","rev":0,"route":"/red","stack":[{"screen":"red"}],"sheets":[]}"#])
        XCTAssertEqual(try stream.readLine(), "")
        try DaemonGrantsTests.grantsText
            .replacingOccurrences(of: "control lobby,hall \(deskControl) desk", with: "control lobby \(deskControl) desk")
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertNil(daemon.signal(SIGHUP, waitUpTo: 0))
        XCTAssertEqual(try stream.readUntilClosed(),
                       ["event: denied", #"data: {"error":"forbidden","message":"room revoked"}"#, ""])
    }

    func test_webSocket_linesObeyTheGrant_andARevokedTokenCloses1008AfterTheLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, path) = try daemon(dir)
        defer { daemon.stop() }
        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        ws.sendText("WHOAMI")
        XCTAssertTrue(try ws.readText().hasSuffix(" anon none -"))
        ws.sendText("GET")
        XCTAssertTrue(try ws.readText().hasPrefix("ERR auth-required "))
        ws.sendText("AUTH \(screen)")
        XCTAssertEqual(try ws.readText(), "OK 0")
        ws.sendText("WATCH\nSELECT green")
        XCTAssertEqual(try ws.readText(), "STATE 0 /red")
        XCTAssertTrue(try ws.readText().hasPrefix("ERR forbidden "))

        try DaemonGrantsTests.grantsText.replacingOccurrences(of: "view * \(screen)\n", with: "")
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertNil(daemon.signal(SIGHUP, waitUpTo: 0))
        XCTAssertEqual(try ws.readText(), "ERR forbidden token revoked")
        XCTAssertEqual(try ws.readClose(), 1008)
    }
}
