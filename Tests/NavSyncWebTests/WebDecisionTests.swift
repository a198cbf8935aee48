import XCTest
import NavSyncCore
import NavSyncWeb

final class WebDecisionTests: XCTestCase {
    private let access = WebAccess(allowedOrigins: ["https://ops.example/", "HTTP://Wall.Example:8080"])

    private func head(_ target: String, host: String? = "127.0.0.1:7878", _ extra: [(String, String)] = [],
                      te: Bool = false) -> HTTPRequestHead {
        head("GET", target, host: host, extra, te: te)
    }

    private func head(_ method: String, _ target: String, host: String? = "127.0.0.1:7878",
                      _ extra: [(String, String)] = [], te: Bool = false) -> HTTPRequestHead {
        var headers: [(name: String, value: String)] = host.map { [("host", $0)] } ?? []
        headers += extra.map { (name: $0.0, value: $0.1) }
        return HTTPRequestHead(method: method, target: target, minorVersion: 1, headers: headers, hasTransferEncoding: te)
    }

    private func judge(_ head: HTTPRequestHead, token: String? = nil) -> WebDecision {
        WebDecision.judge(head, access: access) { presented in
            guard let token else { return .granted(.unrestricted) }
            guard let presented else { return .missing }
            return presented == token ? .granted(Grant(role: .control, rooms: .every, name: "control")) : .wrong
        }
    }

    private let upgrade = [("upgrade", "websocket"), ("connection", "keep-alive, Upgrade"),
                           ("sec-websocket-version", "13"), ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")]

    func testRouter_knownPaths() {
        XCTAssertEqual(WebEndpoint.route(path: "/"), .page)
        XCTAssertEqual(WebEndpoint.route(path: "/ws"), .webSocket)
        XCTAssertEqual(WebEndpoint.route(path: "/healthz"), .health)
        XCTAssertEqual(WebEndpoint.route(path: "/metrics"), .metrics)
        XCTAssertEqual(WebEndpoint.route(path: "/rooms/main"), .room("main"))
        XCTAssertNil(WebEndpoint.route(path: "/index.html"))
        XCTAssertEqual(WebEndpoint.route(path: "/rooms"), .roomList)
        XCTAssertEqual(judge(head("/?room=kitchen")), .serve(.page))
    }

    func testDecision_statusCodes() {
        XCTAssertEqual(judge(head("/nope")), .refuse(status: 404, reason: "no such path", close: false))
        // A POST refused before its body is read is closed.
        XCTAssertEqual(judge(head("POST", "/")), .refuse(status: 405, reason: "only GET, HEAD", close: true))
        XCTAssertEqual(judge(head("DELETE", "/rooms/main")), .refuse(status: 405, reason: "only GET, HEAD, POST", close: false))
        XCTAssertEqual(judge(head("POST", "/", te: true)), .refuse(status: 405, reason: "only GET, HEAD", close: true))
        XCTAssertEqual(judge(head("GET", "/", te: true)), .refuse(status: 400, reason: "Transfer-Encoding on a GET", close: true))
        XCTAssertEqual(judge(head("/rooms/bad%20name")), .refuse(status: 400, reason: "bad room name", close: false))
        XCTAssertEqual(judge(head("/rooms/" + String(repeating: "a", count: 65))), .refuse(status: 400, reason: "bad room name", close: false))
        XCTAssertEqual(judge(head("HEAD", "/rooms/main")), .serve(.room("main")))
        XCTAssertEqual(judge(head("/healthz")), .serve(.health))
    }

    func testDecision_hostCheckComesFirst() {
        for host in ["evil.example", "evil.example:7878", "localhost.evil.example", "127.0.0.1.evil", "", "1.2.3.4:x"] {
            XCTAssertEqual(judge(head("/nope", host: host)), .refuse(status: 403, reason: "Host not allowed", close: false), host)
        }
        for host in ["localhost", "LOCALHOST:7878", "127.0.0.1", "10.0.0.7:80", "[::1]:7878", "[::1]",
                     "ops.example", "ops.example:443", "wall.example:9"] {
            XCTAssertEqual(judge(head("/healthz", host: host)), .serve(.health), host)
        }
        let noHostOldClient = HTTPRequestHead(method: "GET", target: "/healthz", minorVersion: 0, headers: [])
        XCTAssertEqual(judge(noHostOldClient), .refuse(status: 403, reason: "Host not allowed", close: false))
    }

    func testDecision_throttledOrInvalidCredential_isA401OfItsOwn_andTheResponseSaysWhenOrWhy() {
        let bearer = head("/metrics", [("authorization", "Bearer anything")])
        XCTAssertEqual(WebDecision.judge(bearer, access: access) { _ in .throttled(retryAfterSeconds: 7) },
                       .throttled(retryAfterSeconds: 7))
        XCTAssertEqual(WebDecision.judge(bearer, access: access) { _ in .refused("token expired") }, .invalidToken("token expired"))
        // Paths that need no token never ask.
        XCTAssertEqual(WebDecision.judge(head("/healthz"), access: access) { _ in .throttled(retryAfterSeconds: 7) },
                       .serve(.health))
        let throttled = String(decoding: HTTPResponse.throttled(retryAfterSeconds: 7, closes: false)
            .encoded(date: "d", server: "s", headOnly: false), as: UTF8.self)
        XCTAssertTrue(throttled.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), throttled)
        XCTAssertTrue(throttled.contains("\r\nRetry-After: 7\r\n"), throttled)
        XCTAssertTrue(throttled.hasSuffix("\r\n\r\nthrottled, retry in 7 s\n"), throttled)
        let invalid = String(decoding: HTTPResponse.invalidToken("token expired", closes: true)
            .encoded(date: "d", server: "s", headOnly: false), as: UTF8.self)
        XCTAssertTrue(invalid.contains("\r\nWWW-Authenticate: Bearer realm=\"navsync\", error=\"invalid_token\"\r\n"), invalid)
        XCTAssertTrue(invalid.contains("\r\nConnection: close\r\n"), invalid)
    }

    func testDecision_tokenGuardsMetricsAndRooms() {
        let refused = WebDecision.refuse(status: 401, reason: "Authorization: Bearer <token> needed", close: false)
        XCTAssertEqual(judge(head("/metrics"), token: "s3cret"), refused)
        XCTAssertEqual(judge(head("/rooms/main", [("authorization", "Bearer wrong")]), token: "s3cret"), .wrongToken)
        let unusable = WebDecision.refuse(status: 401, reason: "Authorization: Bearer <token> is the only credential taken",
                                          close: false)
        XCTAssertEqual(judge(head("/rooms/main", [("authorization", "Basic s3cret")]), token: "s3cret"), unusable)
        XCTAssertEqual(judge(head("/rooms/main", [("authorization", "  ")]), token: "s3cret"), refused)
        XCTAssertEqual(judge(head("/metrics", [("authorization", "bearer s3cret")]), token: "s3cret"), .serve(.metrics))
        XCTAssertEqual(judge(head("/"), token: "s3cret"), .serve(.page))
        XCTAssertEqual(judge(head("/healthz"), token: "s3cret"), .serve(.health))
        XCTAssertEqual(judge(head("/metrics")), .serve(.metrics))
    }

    func testDecision_aCredentialOfAnotherScheme_is401_evenWhereAnonymousWouldDo() {
        let unusable = WebDecision.refuse(status: 401, reason: "Authorization: Bearer <token> is the only credential taken",
                                          close: false)
        // No token configured: anonymous may do everything, yet a credential
        // that was presented is judged, and these cannot be.
        for value in ["Basic YWRhOnMzY3JldA==", "Token abc", "s3cret", " Basic\tx", "Bearer-ish abc"] {
            XCTAssertEqual(judge(head("/rooms/main", [("authorization", value)])), unusable, value)
        }
        // Bearer with no token is a script's unset variable: no credential.
        for value in ["Bearer", "Bearer   ", "bearer\t"] {
            XCTAssertEqual(judge(head("/rooms/main", [("authorization", value)])), .serve(.room("main")), value)
            XCTAssertEqual(judge(head("/rooms/main", [("authorization", value)]), token: "s3cret"),
                           .refuse(status: 401, reason: "Authorization: Bearer <token> needed", close: false), value)
        }
        XCTAssertEqual(judge(head("POST", "/rooms/main", [("authorization", "Basic x")])),
                       .refuse(status: 401, reason: "Authorization: Bearer <token> is the only credential taken", close: true))
        // A blank header is no credential; paths that take none do not look.
        XCTAssertEqual(judge(head("/rooms/main", [("authorization", "")])), .serve(.room("main")))
        XCTAssertEqual(judge(head("/", [("authorization", "Basic x")])), .serve(.page))
        XCTAssertEqual(judge(head("/healthz", [("authorization", "Basic x")])), .serve(.health))
        XCTAssertEqual(WebAccess.credential(inAuthorization: "Bearer  abc "), .bearer("abc"))
        XCTAssertEqual(WebAccess.credential(inAuthorization: nil), .none)
    }

    func testDecision_webSocketUpgrade() {
        XCTAssertEqual(judge(head("/ws", upgrade)), .upgrade(key: "dGhlIHNhbXBsZSBub25jZQ=="))
        let bad = WebDecision.refuse(status: 400, reason: "not a valid WebSocket upgrade", close: true)
        XCTAssertEqual(judge(head("/ws")), bad)
        XCTAssertEqual(judge(head("HEAD", "/ws", upgrade)), bad)
        XCTAssertEqual(judge(head("/ws", Array(upgrade.dropLast()) + [("sec-websocket-key", "short==")])), bad)
        XCTAssertEqual(judge(head("/ws", upgrade.map { $0.0 == "sec-websocket-version" ? ($0.0, "8") : $0 })), bad)
    }

    func testDecision_originCheck() {
        let refused = WebDecision.refuse(status: 403, reason: "Origin not allowed", close: true)
        let accepted = WebDecision.upgrade(key: "dGhlIHNhbXBsZSBub25jZQ==")
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "http://127.0.0.1:7878")])), accepted)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "https://ops.example")])), accepted)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "http://wall.example:8080")])), accepted)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "https://evil.example")])), refused)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "http://127.0.0.1:9999")])), refused)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "null")])), refused)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "http://wall.example")])), refused)
    }

    func testDecision_originOverTLSIsHTTPSPlusHost() {
        let refused = WebDecision.refuse(status: 403, reason: "Origin not allowed", close: true)
        let accepted = WebDecision.upgrade(key: "dGhlIHNhbXBsZSBub25jZQ==")
        func overTLS(_ origin: String) -> WebDecision {
            WebDecision.judge(head("/ws", upgrade + [("origin", origin)]), access: access, overTLS: true) { _ in
                .granted(.unrestricted)
            }
        }
        XCTAssertEqual(overTLS("https://127.0.0.1:7878"), accepted)
        // The page over plain HTTP is another origin than the daemon's TLS listener.
        XCTAssertEqual(overTLS("http://127.0.0.1:7878"), refused)
        XCTAssertEqual(judge(head("/ws", upgrade + [("origin", "https://127.0.0.1:7878")])), refused)
        XCTAssertEqual(overTLS("https://ops.example"), accepted)
        XCTAssertEqual(overTLS("https://evil.example"), refused)
    }

    func testAccess_normalizesOrigins() {
        XCTAssertEqual(WebAccess.normalizedOrigin("HTTPS://Ops.Example/"), "https://ops.example")
        XCTAssertNil(WebAccess.normalizedOrigin("ops.example"))
        XCTAssertNil(WebAccess.normalizedOrigin("https://ops.example/path"))
        XCTAssertNil(WebAccess.normalizedOrigin("https://user@ops.example"))
    }

    func testResponse_carriesLengthDateServerAndAllow() {
        let response = HTTPResponse.refusal(405, "only GET and HEAD", closes: true)
        let text = String(decoding: response.encoded(date: "D", server: "navsyncd/x", headOnly: false), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        for header in ["Date: D\r\n", "Server: navsyncd/x\r\n", "Content-Length: 18\r\n", "Allow: GET, HEAD\r\n", "Connection: close\r\n"] {
            XCTAssertTrue(text.contains(header), header)
        }
        XCTAssertTrue(text.hasSuffix("\r\n\r\nonly GET and HEAD\n"))
        let head = String(decoding: response.encoded(date: "D", server: "s", headOnly: true), as: UTF8.self)
        XCTAssertTrue(head.hasSuffix("\r\n\r\n") && head.contains("Content-Length: 18\r\n"))
    }

    func testDate_imfFixdate() {
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(secondsSince1970: 1_796_083_199), "Mon, 30 Nov 2026 23:59:59 GMT")
    }

    func testWebSocketLines_messagesToFramerInput() {
        XCTAssertEqual(WebSocketLines.framerInput(forMessage: Array("GET".utf8)), Array("GET\n".utf8))
        XCTAssertEqual(WebSocketLines.framerInput(forMessage: Array("GET\nWATCH\n".utf8)), Array("GET\nWATCH\n".utf8))
        XCTAssertEqual(WebSocketLines.framerInput(forMessage: []), Array("\n".utf8))
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(WebSocketLines.framerInput(forMessage: Array("SELECT red\r\nGET\nPOP".utf8)))
        var frames: [LineFramer.Frame] = []
        while let frame = framer.next() { frames.append(frame) }
        XCTAssertEqual(frames, [.tooLong, .line(ArraySlice("GET".utf8)), .line(ArraySlice("POP".utf8))])
    }

    func testWebSocketLines_outputSplitsIntoOneMessagePerLine() {
        var splitter = WebSocketLines.OutputSplitter()
        XCTAssertEqual(splitter.messages(from: Array("OK 1\nEVENT 1 select /red\n".utf8)).map(Array.init),
                       [Array("OK 1".utf8), Array("EVENT 1 select /red".utf8)])
        XCTAssertEqual(splitter.messages(from: Array("PAR".utf8)), [])
        XCTAssertEqual(splitter.messages(from: Array("T\n\n".utf8)).map(Array.init), [Array("PART".utf8), []])
    }
}

/// The HTTP API's order of checks (HTTP-API.md): each request fails at the
/// first rule it breaks, so a request that breaks two gets the earlier one.
final class WebDecisionAPIOrderTests: XCTestCase {
    private let access = WebAccess(allowedOrigins: ["https://ops.example"])
    private let control = Grant(role: .control, rooms: .every, name: "ops")
    private let viewer = Grant(role: .view, rooms: .every, name: "wall")
    private let hallOnly = Grant(role: .control, rooms: .only(["hall"]), name: "desk")

    private func post(_ path: String = "/rooms/hall", _ headers: [(String, String)] = [], length: Int? = 12,
                      te: Bool = false) -> HTTPRequestHead {
        var all: [(name: String, value: String)] = [("host", "127.0.0.1:7878")]
        if let length { all.append(("content-length", String(length))) }
        all += headers.map { (name: $0.0, value: $0.1) }
        return HTTPRequestHead(method: "POST", target: path, minorVersion: 1, headers: all,
                               contentLength: length ?? 0, hasTransferEncoding: te)
    }

    private func judge(_ head: HTTPRequestHead, _ credential: Credential) -> WebDecision {
        WebDecision.judge(head, access: access) { _ in credential }
    }

    private func status(_ decision: WebDecision) -> Int? {
        switch decision {
        case .refuse(let status, _, let close):
            XCTAssertTrue(close, "every refusal of a POST closes: \(decision)")
            return status
        case .wrongToken, .invalidToken, .throttled: return 401
        case .change: return 200
        default: return nil
        }
    }

    private let json = ("content-type", "application/json")

    func test_post_eachRuleInTurn() {
        let evil = ("origin", "http://evil.example")
        XCTAssertEqual(status(judge(post("/rooms/bad!name", [evil], te: true), .missing)), 401, "credential before the name")
        XCTAssertEqual(status(judge(post("/rooms/bad!name", [evil]), .granted(hallOnly))), 403, "a list grant: forbidden first")
        XCTAssertEqual(status(judge(post("/rooms/bad!name", [evil]), .granted(control))), 400, "then the name")
        XCTAssertEqual(status(judge(post("/rooms/hall", [evil, ("authorization", "Bearer v")]), .granted(viewer))), 403,
                       "a token's grant's role")
        XCTAssertEqual(status(judge(post("/rooms/bad!name", [evil]), .granted(viewer))), 401,
                       "no token and an anonymous view role: a credential is needed, before the name")
        XCTAssertEqual(status(judge(post("/rooms/hall", [evil], te: true), .granted(control))), 403, "Origin before the length")
        XCTAssertEqual(status(judge(post("/rooms/hall", [], length: nil), .granted(control))), 411)
        XCTAssertEqual(status(judge(post("/rooms/hall", [], te: true), .granted(control))), 411, "Transfer-Encoding with a length")
        XCTAssertEqual(status(judge(post("/rooms/hall", [], length: 8193), .granted(control))), 413, "size before type")
        XCTAssertEqual(status(judge(post("/rooms/hall", [], length: 8192), .granted(control))), 415, "8 KiB exactly passes the size")
        XCTAssertEqual(status(judge(post("/rooms/hall", [("content-type", "text/plain")]), .granted(control))), 415)
        XCTAssertEqual(status(judge(post("/rooms/hall", [("content-type", "Application/JSON; charset=utf-8")]),
                                    .granted(control))), 200)
        XCTAssertEqual(status(judge(post("/rooms/hall", [json, ("origin", "https://ops.example")]), .granted(control))), 200)
        XCTAssertEqual(status(judge(post("/rooms/hall", [json, ("origin", "http://127.0.0.1:7878")]), .granted(control))), 200)
        XCTAssertEqual(status(judge(post("/rooms/hall", [json]), .wrong)), 401)
    }

    func test_post_carriesTheGrantAndToken_andAsksFor100ContinueOnlyWhenAsked() {
        var head = post("/rooms/hall", [json, ("authorization", "Bearer abc"), ("expect", "100-continue")])
        XCTAssertEqual(judge(head, .granted(control)),
                       .change(room: "hall", grant: control, token: "abc", expectsContinue: true))
        head = post("/rooms/hall", [json])
        XCTAssertEqual(judge(head, .granted(control)), .change(room: "hall", grant: control, token: nil, expectsContinue: false))
    }

    func test_events_tokenFromTheQuery_originAndSince() {
        func get(_ target: String, _ headers: [(String, String)] = []) -> HTTPRequestHead {
            HTTPRequestHead(method: "GET", target: target, minorVersion: 1,
                            headers: [("host", "127.0.0.1:7878")] + headers.map { (name: $0.0, value: $0.1) })
        }
        var asked: [String?] = []
        let decision = WebDecision.judge(get("/rooms/hall/events?since=x&token=a%2Bb"), access: access) { token in
            asked.append(token)
            return .granted(self.viewer)
        }
        XCTAssertEqual(asked, ["a+b"], "the token is judged before the rest of the query")
        XCTAssertEqual(decision, .refuse(status: 400, reason: "?since= must be a revision, a whole number below 2^64", close: false))
        asked = []
        _ = WebDecision.judge(get("/rooms/hall?token=abc"), access: access) { token in
            asked.append(token)
            return .missing
        }
        XCTAssertEqual(asked, [nil], "?token= is read on the events path only")
        XCTAssertEqual(WebDecision.judge(get("/rooms/hall/events", [("origin", "http://evil.example")]), access: access) { _ in
            .granted(self.viewer)
        }, .refuse(status: 403, reason: "Origin not allowed", close: false))
        XCTAssertEqual(WebDecision.judge(get("/rooms/hall/events", [("last-event-id", "7")]), access: access) { _ in
            .granted(self.viewer)
        }, .events(room: "hall", grant: viewer, token: nil,
                   request: EventStreamRequest(resumeAfter: 7, token: nil, memberName: nil)))
    }

    func test_routes_andTheirMethods() {
        XCTAssertEqual(WebEndpoint.route(path: "/rooms/hall/members"), .roomMembers("hall"))
        XCTAssertEqual(WebEndpoint.route(path: "/rooms/hall/events"), .roomEvents("hall"))
        XCTAssertEqual(WebEndpoint.route(path: "/rooms/hall/other"), .room("hall/other"), "a bad name, refused later")
        XCTAssertEqual(WebEndpoint.room("hall").allowHeader, "GET, HEAD, POST")
        XCTAssertEqual(WebEndpoint.roomMembers("hall").allowHeader, "GET, HEAD")
        XCTAssertEqual(WebEndpoint.roomEvents("hall").allowHeader, "GET")
    }
}
