import NavSyncCore
import NavSyncServer
import UVLoop

/// The HTTP side of one connection the sniff judged HTTP: it answers
/// GET/HEAD requests in order, and after a WebSocket upgrade turns text
/// messages into lines for the same server session a TCP client has, and
/// that session's output lines into text messages. Nothing read here ever
/// reaches the server except a WebSocket message's lines.
///
/// Owned by its `ConnectionDoor`, whose connection stays the one owner and
/// the one teardown (`close`); it writes through the `WebByteStream` below.
/// Must be used on the loop thread only.
final class WebExchange {
    private enum Phase {
        case http
        case webSocket(WebSocketFramer)
        case over
    }

    private let door: WebFrontDoor
    private let server: Server
    private let session: Session
    private unowned let stream: any WebByteStream
    private var parser = HTTPHeadParser()
    /// Bytes of the current request's body still to skip.
    private var bodyLeft = 0
    private var phase = Phase.http
    private var headTimer: LoopTimer?
    private var splitter = WebSocketLines.OutputSplitter()
    private var waitingForDrain = false
    /// Wrong Bearer tokens on this connection; the third closes it.
    private var failedBearers = 0

    init(door: WebFrontDoor, server: Server, session: Session, stream: any WebByteStream, loop: EventLoop) {
        self.door = door
        self.server = server
        self.session = session
        self.stream = stream
        headTimer = LoopTimer(loop: loop)
        armHeadTimer()
    }

    /// Bytes read from the connection.
    func received(_ bytes: some Collection<UInt8>) {
        switch phase {
        case .http:
            parser.append(bytes)
            serveRequests()
        case .webSocket(let framer):
            handle(framer.receive(bytes), from: framer)
        case .over:
            break
        }
    }

    /// The transport has written everything it held.
    func writeQueueDrained() {
        guard waitingForDrain else { return }
        waitingForDrain = false
        stream.resumeWebReading()
        serveRequests()
    }

    // MARK: - HTTP

    private func serveRequests() {
        while case .http = phase {
            if bodyLeft > 0 {
                bodyLeft -= parser.skip(upTo: bodyLeft)
                if bodyLeft > 0 { return }
            }
            // Responses queued past --max-pending (the same bound as every
            // other output of a connection) pause the reading of more
            // requests until the client has read them: a pipelining client
            // that never reads must not grow the daemon's memory.
            if stream.queuedWriteBytes > server.maxPendingOutputBytes {
                waitingForDrain = true
                stream.pauseWebReading()
                return
            }
            guard let outcome = parser.next() else { return }
            switch outcome {
            case .failure(let error):
                door.noteRequest()
                respond(.refusal(error.status, error.reason, closes: true), headOnly: false, why: "HTTP \(error.status): \(error.reason)")
            case .success(let head):
                serve(head)
            }
        }
    }

    private func serve(_ head: HTTPRequestHead) {
        door.noteRequest()
        bodyLeft = head.contentLength
        let headOnly = head.method == "HEAD"
        let closes = !head.wantsKeepAlive
        let decision = WebDecision.judge(head, access: door.access, overTLS: stream.isEncrypted) { [server, session] in
            server.credential(bearer: WebAccess.bearerToken(head.header("authorization")), from: session)
        }
        switch decision {
        case .wrongToken:
            refuseBearer(.refusal(401, "wrong token", closes: closes), "wrong Bearer token", headOnly: headOnly)
        case .invalidToken(let why):
            refuseBearer(.invalidToken(why, closes: closes), "Bearer \(why)", headOnly: headOnly)
        case .throttled(let seconds):
            refuseBearer(.throttled(retryAfterSeconds: seconds, closes: closes), "Bearer throttled", headOnly: headOnly)
        case .listRooms(let grant):
            guard server.storeIsAvailable else {
                respond(HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes),
                        headOnly: headOnly, why: "HTTP exchange done")
                return
            }
            respond(HTTPResponse(status: 200, contentType: "application/json", body: server.roomListJSON(visibleTo: grant),
                                 closesConnection: closes), headOnly: headOnly, why: "HTTP exchange done")
        case .refuse(let status, let reason, let close):
            respond(.refusal(status, reason, closes: close || closes), headOnly: headOnly,
                    why: "HTTP \(status) for \(head.method) \(head.path.prefix(100)): \(reason)")
        case .upgrade(let key):
            upgrade(key: key)
        case .serve(let endpoint):
            respond(response(for: endpoint, closes: closes), headOnly: headOnly, why: "HTTP exchange done")
        }
    }

    /// A failed Bearer: 401; the third on this connection closes it.
    private func refuseBearer(_ response: HTTPResponse, _ what: String, headOnly: Bool) {
        failedBearers += 1
        let last = failedBearers >= Limits.authAttemptsBeforeClose
        var response = response
        response.closesConnection = response.closesConnection || last
        respond(response, headOnly: headOnly, why: last ? "HTTP 401: third failed Bearer (\(what))" : "HTTP 401: \(what)")
    }

    private func response(for endpoint: WebEndpoint, closes: Bool) -> HTTPResponse {
        switch endpoint {
        case .page:
            // The page talks only to the daemon it came from and may not be framed.
            let policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                + "connect-src 'self'; img-src data:; frame-ancestors 'none'"
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: door.page,
                                extraHeaders: [("Content-Security-Policy", policy)], closesConnection: closes)
        case .health:
            guard server.storeIsAvailable else {
                return HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes)
            }
            return HTTPResponse(status: 200, body: Array("ok".utf8), closesConnection: closes)
        case .metrics:
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                                body: Array(server.metricsText().utf8), closesConnection: closes)
        case .room(let name):
            // With the backplane down the daemon's view may be stale (BACKPLANE.md: /rooms is refused too).
            guard server.storeIsAvailable else {
                return HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes)
            }
            return HTTPResponse(status: 200, contentType: "application/json", body: server.roomJSON(name),
                                closesConnection: closes)
        case .webSocket, .roomList:
            // The decision sends every /ws request to an upgrade or a refusal.
            return .refusal(400, "not a valid WebSocket upgrade", closes: true)
        }
    }

    private func respond(_ response: HTTPResponse, headOnly: Bool, why: String) {
        stream.sendRaw(response.encoded(date: door.date(), server: door.serverHeader, headOnly: headOnly))
        if response.closesConnection {
            end(why)
        } else {
            armHeadTimer()
        }
    }

    /// The next head must be complete within the timeout; a connection that
    /// started one and stalled gets 408, an idle one is just closed.
    private func armHeadTimer() {
        headTimer?.start(afterMilliseconds: WebFrontDoor.headTimeoutMilliseconds) { [unowned self] in
            guard case .http = self.phase else { return }
            if self.parser.bufferedByteCount > 0 || self.bodyLeft > 0 {
                self.respond(.refusal(408, "request head not complete in time", closes: true), headOnly: false,
                             why: "HTTP request head timed out")
            } else {
                self.end("HTTP connection idle")
            }
        }
    }

    private func end(_ why: String) {
        phase = .over
        headTimer?.close()
        headTimer = nil
        server.finish(session, because: .web(why))
    }

    // MARK: - WebSocket

    private func upgrade(key: String) {
        headTimer?.close()
        headTimer = nil
        stream.sendRaw(HTTPResponse.switchingProtocols(acceptKey: WebSocketAcceptKey.make(forKey: key),
                                                     date: door.date(), server: door.serverHeader))
        let framer = WebSocketFramer(maxMessageBytes: door.maxMessageBytes, textWriter: door.textWriter)
        phase = .webSocket(framer)
        door.noteWebSocketOpened()
        // A body on the upgrade request is skipped; what follows it is frames.
        _ = parser.skip(upTo: bodyLeft)
        bodyLeft = 0
        let early = parser.takeBuffered()
        if !early.isEmpty { handle(framer.receive(early), from: framer) }
    }

    private func handle(_ events: [WebSocketFramer.Event], from framer: WebSocketFramer) {
        for event in events {
            guard case .text(let message) = event else { continue }
            server.receive(WebSocketLines.framerInput(forMessage: message), from: session)
        }
        let output = framer.takeOutput()
        if !output.isEmpty {
            // Pongs and close replies are this connection's output like any
            // reply: past --max-pending, reading pauses until they drain.
            stream.sendRaw(output)
            server.outputQueuedOutsideLines(for: session)
        }
        if framer.closeSent, case .webSocket = phase {
            phase = .over
            door.noteWebSocketClosed()
            server.finish(session, because: .web("WebSocket closed"))
        }
    }

    /// The session's output: one text message per line on a WebSocket;
    /// dropped on plain HTTP (only the shutdown `BYE` is ever written there,
    /// and plain HTTP connections are simply closed).
    func send(_ chunks: [[UInt8]]) {
        guard case .webSocket(let framer) = phase else { return }
        for chunk in chunks {
            splitter.forEachMessage(in: chunk) { framer.sendText($0) }
        }
        let output = framer.takeOutput()
        if !output.isEmpty { stream.sendRaw(output) }
    }

    /// A room's turn of events, the same buffer for every watcher of the
    /// room: framed once for all WebSocket watchers (the shared writer
    /// makes the frames this connection's framer would make) and written
    /// without a copy. When this connection could not send those frames as
    /// they are (a close on its way, part of a line held), it frames the
    /// lines itself as `send` does.
    func send(shared bytes: SharedBytes) {
        guard case .webSocket(let framer) = phase else { return }
        guard framer.takesMessages, !splitter.holdsPartialLine,
              bytes.count > 0, bytes[bytes.count - 1] == UInt8(ascii: "\n") else {
            send([bytes.array])
            return
        }
        let writer = door.textWriter
        stream.sendShared(bytes.derived(by: writer) { writer.frames(ofLines: $0) })
        // Whatever the framer holds goes after the lines, as in `send`.
        if framer.hasOutput {
            let output = framer.takeOutput()
            if !output.isEmpty { stream.sendRaw(output) }
        }
    }

    /// The session is ending: a WebSocket gets its close frame with the code
    /// for the reason (after the lines already sent, such as `BYE`).
    func closing(because reason: CloseReason?) {
        guard case .webSocket(let framer) = phase else { return }
        phase = .over
        door.noteWebSocketClosed()
        if !framer.closeSent {
            framer.close(code: Self.closeCode(for: reason))
            let output = framer.takeOutput()
            if !output.isEmpty { stream.sendRaw(output) }
        }
    }

    /// The connection is gone; stop the timer.
    func closed() {
        if case .webSocket = phase { door.noteWebSocketClosed() }
        phase = .over
        headTimer?.close()
        headTimer = nil
    }

    static func closeCode(for reason: CloseReason?) -> UInt16 {
        switch reason {
        case .authFailed?, .tokenRevoked?, .tokenExpired?: return 1008
        case .shutdown?: return 1001
        case .busy?: return 1013
        case .transportError?: return 1011
        default: return 1000
        }
    }
}
