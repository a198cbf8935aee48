import ChildProcessHarness
import NavSyncCore
import Foundation
import Glibc
import XCTest

/// HTTP and WebSocket on the daemon's port, over real sockets: the sniff,
/// every endpoint, refusals, and WebSocket sessions that behave exactly as
/// TCP ones.
final class WebFrontDoorTests: XCTestCase {
    // MARK: - The sniff

    func test_crossSitePost_changesNothing() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        // What curl -X POST --data-binary $'SELECT blue x\n' sends, then a second pipelined request.
        let browser = try daemon.connect()
        browser.send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n\r\nSELECT blue x\n"
            + "POST /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 9\r\n\r\nPUSH red\n")
        let first = try browser.readReply()
        XCTAssertEqual(first.status, 405)
        XCTAssertEqual(first.headers["allow"], "GET, HEAD")
        // (1.3) A POST answered before its body is read closes the connection: neither
        // its body nor the request behind it is ever read.
        XCTAssertEqual(first.headers["connection"], "close")
        XCTAssertEqual(try browser.readUntilClosed(), [])
        // curl itself, as the issue tried it.
        let curl = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                                                    "--data-binary", "SELECT blue x\n", "http://127.0.0.1:\(daemon.port)/"])
        XCTAssertEqual(curl.stdout, "405")
        let netcat = try daemon.connect()
        XCTAssertEqual(try netcat.request("GET"), "STATE 0 /red")
        XCTAssertEqual(try netcat.requestList("STATS").first { $0.hasPrefix("STAT commands ") }, "STAT commands 2", "GET and STATS only")
    }

    func test_lineClients_areUntouchedBySniff() throws {
        let daemon = try DaemonProcess(arguments: ["--max-line", "64"], state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        // Lines that begin like requests but are not, and a long one.
        XCTAssertEqual(try client.request("GET / HTTP/1.2").hasPrefix("ERR bad-args"), true)
        XCTAssertEqual(try client.request("OPEN /red/" + String(repeating: "x", count: 100)), "ERR line-too-long line longer than 64 bytes; discarded")
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        // An unterminated first line at end of input still runs.
        let last = try daemon.connect()
        last.send("GET")
        last.shutdownWrite()
        XCTAssertEqual(try last.readUntilClosed(), ["STATE 0 /red"])
        // A request line over 8 KiB is 414, not a line-too-long.
        let long = try daemon.connect()
        long.send("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n")
        XCTAssertEqual(try long.readReply().status, 414)
    }

    // MARK: - Endpoints

    func test_endpoints_answerAsTheContractSays() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        // Logged right after the `listening on` line the harness waits for.
        XCTAssertTrue(waitUntil { daemon.log.contains("web client at http://127.0.0.1:\(daemon.port)/\n") }, daemon.log)
        let netcat = try daemon.connect()
        XCTAssertEqual(try netcat.request("SELECT green"), "OK 1")
        XCTAssertEqual(try netcat.request("PUSH blue hi"), "OK 2")

        let http = try daemon.connect()
        let page = try http.get("/?room=kitchen")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertTrue(page.text.hasPrefix("<!doctype html>") && page.text.contains("/ws"))
        XCTAssertFalse(page.text.contains("http://") || page.text.contains("https://"), "no outside resources")
        for name in ["date", "server", "content-length"] { XCTAssertNotNil(page.headers[name], name) }

        http.sendRequest("HEAD", "/")
        let head = try http.readReply(headOnly: true)
        XCTAssertEqual(head.headers["content-length"], String(page.body.count))

        let health = try http.get("/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok")

        let metrics = try http.get("/metrics")
        XCTAssertEqual(metrics.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
        for name in ["navsync_connections", "navsync_watchers", "navsync_rooms", "navsync_changes_total",
                     "navsync_events_out_total", "navsync_resyncs_total", "navsync_commands_total",
                     "navsync_uptime_seconds"] {
            XCTAssertTrue(metrics.text.contains("# HELP \(name) ") && metrics.text.contains("# TYPE \(name) "), name)
        }
        XCTAssertTrue(metrics.text.contains("navsync_build_info{version=\""), metrics.text)
        XCTAssertTrue(metrics.text.contains("\nnavsync_changes_total 2\n"), metrics.text)
        XCTAssertTrue(metrics.text.contains("\nnavsync_connections 2\n"), "HTTP counts as a connection")

        let room = try http.get("/rooms/main")
        XCTAssertEqual(room.headers["content-type"], "application/json")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(room.body)) as? [String: Any])
        XCTAssertEqual(json["room"] as? String, "main")
        XCTAssertEqual(json["rev"] as? Int, 2)
        XCTAssertEqual(json["route"] as? String, "/green/blue:hi")
        let stack = try XCTUnwrap(json["stack"] as? [[String: String]])
        XCTAssertEqual(stack, [["screen": "green"], ["screen": "blue", "data": "hi"]])
        XCTAssertEqual((json["sheets"] as? [Any])?.count, 0)
        XCTAssertEqual(try netcat.request("PRESENT blue a note"), "OK 3")
        let withSheet = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try http.get("/rooms/main").body)) as? [String: Any])
        XCTAssertEqual(withSheet["route"] as? String, "/green/blue:hi#blue:a%20note")
        XCTAssertEqual(withSheet["sheets"] as? [[String: String]], [["screen": "blue", "data": "a note"]])
        XCTAssertEqual(try http.get("/rooms/main").text,
                       #"{"room":"main","rev":3,"route":"/green/blue:hi#blue:a%20note","stack":[{"screen":"green"},"#
                       + #"{"screen":"blue","data":"hi"}],"sheets":[{"screen":"blue","data":"a note"}]}"#,
                       "the keys in the order docs/PROTOCOL.md shows")
        let untouched = try http.get("/rooms/else")
        XCTAssertEqual(untouched.text, #"{"room":"else","rev":0,"route":"/red","stack":[{"screen":"red"}],"sheets":[]}"#)

        XCTAssertEqual(try http.get("/rooms/bad!name").status, 400)
        XCTAssertEqual(try http.get("/nope").status, 404)
        http.sendRequest("DELETE", "/metrics")
        let refused = try http.readReply()
        XCTAssertEqual(refused.status, 405)
        XCTAssertEqual(refused.headers["allow"], "GET, HEAD")
        XCTAssertEqual(try http.get("/ws").status, 400, "a plain GET /ws")

        // Connection: close is honoured; the connection ends after the response.
        let once = try daemon.connect()
        once.sendRequest("GET", "/healthz", headers: [("Connection", "close")])
        XCTAssertEqual(try once.readReply().headers["connection"], "close")
        XCTAssertEqual(try once.readUntilClosed(), [])
    }

    func test_badRequests_getTheirStatus_andNeverRunCommands() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let cases: [(String, Int, Bool)] = [
            ("GET /\u{0}x HTTP/1.1\r\nHost: a\r\n\r\n", 400, true),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1\rX: y\r\n\r\n", 400, true),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\r\n folded\r\n\r\n", 400, true),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, true),
            ("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nSELECT blue\r\n0\r\n\r\n", 400, true),
            ("GET / HTTP/1.1\r\n" + String(repeating: "X-Flood: yes\r\n", count: 700) + "\r\n", 431, true),
            ("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403, false),
        ]
        for (request, status, closes) in cases {
            let client = try daemon.connect()
            client.send(request)
            let reply = try client.readReply()
            XCTAssertEqual(reply.status, status, request)
            if closes { XCTAssertEqual(try client.readUntilClosed(), [], request) }
        }
        // A body on a GET is skipped, and the connection serves the next request.
        let client = try daemon.connect()
        client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 12\r\n\r\nSELECT blue\n"
            + "GET /rooms/main HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(try client.readReply().text, "ok")
        XCTAssertTrue(try client.readReply().text.contains("\"rev\":0"))
        XCTAssertEqual(try daemon.connect().request("GET"), "STATE 0 /red")
    }

    func test_token_guardsMetricsAndRooms_andWebSocketsMustAuth() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let tokenFile = try dir.write("token", "s3cret\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", tokenFile], state: "none")
        defer { daemon.stop() }
        let http = try daemon.connect()
        XCTAssertEqual(try http.get("/metrics").status, 401)
        XCTAssertEqual(try http.get("/rooms/main", headers: [("Authorization", "Bearer nope")]).status, 401)
        XCTAssertEqual(try http.get("/rooms/main", headers: [("Authorization", "Bearer s3cret")]).status, 200)
        XCTAssertEqual(try http.get("/healthz").status, 200)
        XCTAssertEqual(try http.get("/").status, 200)

        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        ws.sendText("GET")
        XCTAssertTrue(try ws.readText().hasPrefix("ERR auth-required"))
        for _ in 0..<3 { ws.sendText("AUTH wrong") }
        for _ in 0..<3 { XCTAssertTrue(try ws.readText().hasPrefix("ERR auth-failed")) }
        XCTAssertEqual(try ws.readClose(), 1008)

        let good = try daemon.connect()
        XCTAssertEqual(try good.upgrade().status, 101)
        good.sendText("AUTH s3cret\nGET")
        XCTAssertEqual(try good.readText(), "OK 0")
        XCTAssertEqual(try good.readText(), "STATE 0 /red")
    }

    // MARK: - WebSocket

    func test_webSocket_speaksTheLineProtocol() throws {
        let daemon = try DaemonProcess(arguments: ["--max-line", "64"], state: "none")
        defer { daemon.stop() }
        let ws = try daemon.connect()
        let reply = try ws.upgrade()
        XCTAssertEqual(reply.status, 101)
        XCTAssertEqual(reply.headers["sec-websocket-accept"], "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

        ws.sendText("WATCH")
        XCTAssertEqual(try ws.readText(), "STATE 0 /red")
        // One message, several lines: several commands, replies and events in order.
        ws.sendText("PUSH blue caf\u{E9}\r\nPING a b\n\nPOP")
        XCTAssertEqual(try ws.readText(), "OK 1")
        XCTAssertEqual(try ws.readText(), "EVENT 1 push /red/blue:caf%C3%A9")
        XCTAssertEqual(try ws.readText(), "PONG a b")
        XCTAssertEqual(try ws.readText(), "OK 2")
        XCTAssertEqual(try ws.readText(), "EVENT 2 pop /red")
        ws.sendText("PING " + String(repeating: "z", count: 100))
        XCTAssertTrue(try ws.readText().hasPrefix("ERR line-too-long"))
        // A fragmented message with a ping in the middle.
        ws.sendFrame(opcode: 0x1, Array("GE".utf8), fin: false)
        ws.sendFrame(opcode: 0x9, Array("hi".utf8))
        ws.sendFrame(opcode: 0x0, Array("T".utf8))
        let pong = try ws.readFrame()
        XCTAssertEqual(pong.opcode, 0xA)
        XCTAssertEqual(pong.payload, Array("hi".utf8))
        XCTAssertEqual(try ws.readText(), "STATE 2 /red")
        ws.sendText("QUIT")
        XCTAssertEqual(try ws.readText(), "BYE")
        XCTAssertEqual(try ws.readClose(), 1000)

        // Binary is refused with 1003, bad UTF-8 with 1007; nothing runs.
        let binary = try daemon.connect()
        XCTAssertEqual(try binary.upgrade().status, 101)
        binary.sendFrame(opcode: 0x2, Array("SELECT green\n".utf8))
        XCTAssertEqual(try binary.readClose(), 1003)
        let broken = try daemon.connect()
        XCTAssertEqual(try broken.upgrade().status, 101)
        broken.sendFrame(opcode: 0x1, [0x53, 0x45, 0xC3, 0x28])
        XCTAssertEqual(try broken.readClose(), 1007)
        XCTAssertEqual(try daemon.connect().request("GET"), "STATE 2 /red")
    }

    func test_webSocket_originCheck() throws {
        let daemon = try DaemonProcess(arguments: ["--allow-origin", "https://ops.example"], state: "none")
        defer { daemon.stop() }
        let own = "http://127.0.0.1:\(daemon.port)"
        XCTAssertEqual(try daemon.connect().upgrade(origin: own, host: "127.0.0.1:\(daemon.port)").status, 101)
        XCTAssertEqual(try daemon.connect().upgrade(origin: "https://ops.example").status, 101)
        XCTAssertEqual(try daemon.connect().upgrade().status, 101, "no Origin: not a browser")
        for origin in ["https://evil.example", "http://127.0.0.1:1", "null"] {
            let client = try daemon.connect()
            XCTAssertEqual(try client.upgrade(origin: origin).status, 403, origin)
            XCTAssertEqual(try client.readUntilClosed(), [], "no socket for \(origin)")
        }
        // DNS rebinding: the page's own name in Host is refused, an allowed origin's host is not.
        XCTAssertEqual(try daemon.connect().get("/", headers: [("Host", "rebind.evil.example:\(daemon.port)")]).status, 403)
        XCTAssertEqual(try daemon.connect().get("/", headers: [("Host", "ops.example")]).status, 200)
    }

    /// Slowloris: a head that never finishes is answered 408 and closed
    /// after the documented ten seconds, and the slot is free again.
    func test_stalledRequestHead_timesOutWith408() throws {
        let daemon = try DaemonProcess(arguments: ["--max-clients", "1"], state: "none")
        defer { daemon.stop() }
        let slow = try daemon.connect()
        slow.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        XCTAssertEqual(try slow.readReply(timeout: 20).status, 408)
        XCTAssertEqual(try slow.readUntilClosed(), [])
        XCTAssertTrue(try waitUntil { (try? daemon.connect().request("PING")) == "PONG" }, "the slot is free again")
    }

    func test_webConnections_countTowardsMaxClients() throws {
        let daemon = try DaemonProcess(arguments: ["--max-clients", "2"], state: "none")
        defer { daemon.stop() }
        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        let http = try daemon.connect()
        XCTAssertEqual(try http.get("/healthz").status, 200)
        // Refused before the daemon learns what it is.
        let third = try daemon.connect()
        third.sendRequest("GET", "/healthz")
        let lines = try third.readUntilClosed()
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines.first?.hasPrefix("ERR busy") == true, "\(lines)")
    }

    func test_shutdown_webSocketGetsByeAnd1001_httpIsClosed() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        ws.sendText("WATCH")
        XCTAssertEqual(try ws.readText(), "STATE 0 /red")
        let http = try daemon.connect()
        XCTAssertEqual(try http.get("/healthz").status, 200)
        XCTAssertEqual(daemon.signal(SIGTERM), 0)
        XCTAssertEqual(try ws.readText(), "BYE")
        XCTAssertEqual(try ws.readClose(), 1001)
        XCTAssertEqual(try http.readUntilClosed(), [])
    }

    /// The same room watched over TCP and over WebSocket while three
    /// clients (TCP and WebSocket) change it at once: both watchers see the
    /// very same lines.
    func test_webSocketAndTCPWatchers_receiveIdenticalStreams() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tcpWatcher = try daemon.connect()
        XCTAssertEqual(try tcpWatcher.request("WATCH"), "STATE 0 /red")
        let wsWatcher = try daemon.connect()
        XCTAssertEqual(try wsWatcher.upgrade().status, 101)
        wsWatcher.sendText("WATCH")
        XCTAssertEqual(try wsWatcher.readText(), "STATE 0 /red")

        let perWriter = 100
        var writers: [LineClient] = []
        for writer in 0..<3 {
            let client = try daemon.connect()
            if writer == 2 { XCTAssertEqual(try client.upgrade().status, 101) }
            writers.append(client)
        }
        let clients = writers
        runOnThreads(3, timeout: 60) { writer in
            var random = SplitMix64(seed: UInt64(writer + 1))
            for _ in 0..<perWriter {
                let command = DaemonWatcherTests.randomCommand(&random)
                if writer == 2 {
                    clients[writer].sendText(command)
                    _ = try? clients[writer].readText()
                } else {
                    _ = try? clients[writer].request(command)
                }
            }
        }
        let last = UInt64(try XCTUnwrap(daemon.connect().request("GET").split(separator: " ").dropFirst().first.flatMap { UInt64($0) }))
        XCTAssertGreaterThan(last, 0)
        var overTCP: [String] = []
        var overWebSocket: [String] = []
        while overTCP.last.flatMap(DaemonWatcherTests.Event.init)?.revision != last {
            overTCP.append(try tcpWatcher.readLine(timeout: 20))
        }
        while overWebSocket.last.flatMap(DaemonWatcherTests.Event.init)?.revision != last {
            overWebSocket.append(try wsWatcher.readText(timeout: 20))
        }
        XCTAssertEqual(overTCP.count, Int(last), "one event per revision")
        XCTAssertEqual(overTCP, overWebSocket)
        XCTAssertEqual(overTCP.compactMap(DaemonWatcherTests.Event.init).map(\.revision), Array(1...last))
    }
}
