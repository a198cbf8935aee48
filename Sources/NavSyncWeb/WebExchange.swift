import NavSyncCore
import UVLoop

/// The HTTP side of one connection the sniff judged HTTP: it answers
/// GET/HEAD requests in order, and after a WebSocket upgrade turns text
/// messages into lines for the layer above (the same server session a TCP
/// client has), and the lines written from above into text messages.
/// Nothing read here ever goes up except a WebSocket message's lines; what
/// HTTP asks of the hub it asks through the `WebHubPort`.
///
/// Owned by its `ConnectionDoor`, the byte-stream layer it reads for and
/// writes through. Must be used on the loop thread only.
final class WebExchange {
    private enum Phase {
        case http
        case webSocket(WebSocketFramer)
        case over
    }

    private let door: WebFrontDoor
    private let hub: any WebHubPort
    private unowned let connection: ConnectionDoor
    private var parser = HTTPHeadParser()
    /// Bytes of the current request's body still to skip.
    private var bodyLeft = 0
    private var phase = Phase.http
    private var headTimer: LoopTimer?
    private var splitter = WebSocketLines.OutputSplitter()
    private var waitingForDrain = false
    /// Wrong Bearer tokens on this connection; the third closes it.
    private var failedBearers = 0

    init(door: WebFrontDoor, hub: any WebHubPort, connection: ConnectionDoor, loop: EventLoop) {
        self.door = door
        self.hub = hub
        self.connection = connection
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
        connection.releaseReading()
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
            if connection.queuedWriteMemory > hub.maxPendingOutputBytes {
                waitingForDrain = true
                connection.holdReadingUntilDrained()
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
        let decision = WebDecision.judge(head, access: door.access, overTLS: connection.isEncrypted) { [hub] in
            hub.credential(bearer: WebAccess.bearerToken(head.header("authorization")))
        }
        switch decision {
        case .wrongToken:
            refuseBearer(.refusal(401, "wrong token", closes: closes), "wrong Bearer token", headOnly: headOnly)
        case .invalidToken(let why):
            refuseBearer(.invalidToken(why, closes: closes), "Bearer \(why)", headOnly: headOnly)
        case .throttled(let seconds):
            refuseBearer(.throttled(retryAfterSeconds: seconds, closes: closes), "Bearer throttled", headOnly: headOnly)
        case .listRooms(let grant):
            guard hub.storeIsAvailable else {
                respond(HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes),
                        headOnly: headOnly, why: "HTTP exchange done")
                return
            }
            let list = Array(RoomDocument.list(hub.roomRevisions(visibleTo: grant)).utf8)
            respond(HTTPResponse(status: 200, contentType: "application/json", body: list, closesConnection: closes),
                    headOnly: headOnly, why: "HTTP exchange done")
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
            guard hub.storeIsAvailable else {
                return HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes)
            }
            return HTTPResponse(status: 200, body: Array("ok".utf8), closesConnection: closes)
        case .metrics:
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                                body: Array(hub.metricsText().utf8), closesConnection: closes)
        case .room(let name):
            // With the backplane down the daemon's view may be stale (BACKPLANE.md: /rooms is refused too).
            guard hub.storeIsAvailable else {
                return HTTPResponse(status: 503, body: Array("backplane down".utf8), closesConnection: closes)
            }
            let document = Array(RoomDocument.json(room: name, state: hub.roomState(name)).utf8)
            return HTTPResponse(status: 200, contentType: "application/json", body: document, closesConnection: closes)
        case .webSocket, .roomList:
            // The decision sends every /ws request to an upgrade or a refusal.
            return .refusal(400, "not a valid WebSocket upgrade", closes: true)
        }
    }

    private func respond(_ response: HTTPResponse, headOnly: Bool, why: String) {
        connection.writeDown(response.encoded(date: door.date(), server: door.serverHeader, headOnly: headOnly))
        if response.closesConnection {
            end(why)
        } else {
            armHeadTimer()
        }
    }

    /// The next head must be complete within the timeout; a connection that
    /// started one and stalled gets 408, an idle one is just closed.
    private func armHeadTimer() {
        headTimer?.start(afterMilliseconds: door.headTimeoutMilliseconds) { [unowned self] in
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
        hub.finish(because: why)
    }

    // MARK: - WebSocket

    private func upgrade(key: String) {
        headTimer?.close()
        headTimer = nil
        connection.writeDown(HTTPResponse.switchingProtocols(acceptKey: WebSocketAcceptKey.make(forKey: key),
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
            connection.passUp(WebSocketLines.framerInput(forMessage: message))
        }
        let output = framer.takeOutput()
        if !output.isEmpty {
            // Pongs and close replies are this connection's output like any
            // reply: past --max-pending, reading pauses until they drain.
            connection.writeDown(output)
            hub.outputQueuedOutsideLines()
        }
        if framer.closeSent, case .webSocket = phase {
            phase = .over
            door.noteWebSocketClosed()
            hub.finish(because: "WebSocket closed")
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
        if !output.isEmpty { connection.writeDown(output) }
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
        connection.writeDown(shared: bytes.derived(by: writer) { writer.frames(ofLines: $0) })
        // Whatever the framer holds goes after the lines, as in `send`.
        if framer.hasOutput {
            let output = framer.takeOutput()
            if !output.isEmpty { connection.writeDown(output) }
        }
    }

    /// The session is ending: a WebSocket gets its close frame with the code
    /// for the reason (after the lines already sent, such as `BYE`).
    func closing(because reason: WebSessionEnd?) {
        guard case .webSocket(let framer) = phase else { return }
        phase = .over
        door.noteWebSocketClosed()
        if !framer.closeSent {
            framer.close(code: (reason ?? .other).webSocketCloseCode)
            let output = framer.takeOutput()
            if !output.isEmpty { connection.writeDown(output) }
        }
    }

    /// The connection is gone; stop the timer.
    func closed() {
        if case .webSocket = phase { door.noteWebSocketClosed() }
        phase = .over
        headTimer?.close()
        headTimer = nil
    }
}
