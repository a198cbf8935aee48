import NavSyncCore
import UVLoop

/// The HTTP side of one connection the sniff judged HTTP: it answers
/// requests in order, and after a WebSocket upgrade turns text messages
/// into lines for the layer above (the same server session a TCP client
/// has), and the lines written from above into text messages. The HTTP
/// API rides the same session: a `POST /rooms/NAME` goes up as the one
/// line of the line protocol that makes the change (and its answer comes
/// down as the line a client would read), and `/rooms/NAME/events` goes
/// up as `WATCH`, its lines coming down as server-sent events, a third
/// adapter of the session's output beside lines and frames. Nothing else
/// read here goes up; what HTTP asks of the hub it asks through the `WebHubPort`.
///
/// Owned by its `ConnectionDoor`, the byte-stream layer it reads for and
/// writes through. Must be used on the loop thread only.
final class WebExchange {
    private enum Phase {
        case http
        case webSocket(WebSocketFramer)
        /// `/rooms/NAME/events`: the session watches, its lines go out as events.
        case events(ServerSentEvents.Translator)
        case over
    }

    /// A `POST /rooms/NAME` whose body is being read, then whose change the
    /// hub decides. A class, so an exchange that holds none (every
    /// WebSocket) carries one pointer for it instead of the whole record.
    private final class PendingChange {
        let room: String
        let grant: Grant
        let token: String?
        let ifMatch: String?
        let closes: Bool
        var body: [UInt8] = []
        var bodyLeft: Int
        /// The change's line went up; the answer is awaited.
        var submitted = false

        init(room: String, grant: Grant, token: String?, ifMatch: String?, closes: Bool, bodyLeft: Int) {
            self.room = room
            self.grant = grant
            self.token = token
            self.ifMatch = ifMatch
            self.closes = closes
            self.bodyLeft = bodyLeft
        }
    }

    private let door: WebFrontDoor
    private let hub: any WebHubPort
    private unowned let connection: ConnectionDoor
    /// The request parser, boxed: once the connection leaves HTTP (a
    /// WebSocket, an events stream) the box goes, and the exchange keeps
    /// one pointer instead of the parser's fields.
    private final class HeadReader {
        var parser = HTTPHeadParser()
    }
    private var reader: HeadReader? = HeadReader()
    /// Bytes of the current request's body still to skip.
    private var bodyLeft = 0
    private var phase = Phase.http
    private var headTimer: LoopTimer?
    private var splitter = WebSocketLines.OutputSplitter()
    private var waitingForDrain = false
    /// Wrong Bearer tokens on this connection; the third closes it.
    private var failedBearers = 0
    private var change: PendingChange?
    /// The session's lines while a change's answer is awaited.
    private var answerLines = WebSocketLines.OutputSplitter()
    /// An events stream's `: ping` after silence; the next request after a
    /// change's answer (never run inside the hub's flush that wrote it).
    private var pingTimer: LoopTimer?
    private var resumeTimer: LoopTimer?
    private let loop: EventLoop

    init(door: WebFrontDoor, hub: any WebHubPort, connection: ConnectionDoor, loop: EventLoop) {
        self.door = door
        self.hub = hub
        self.connection = connection
        self.loop = loop
        headTimer = LoopTimer(loop: loop)
        armHeadTimer()
    }

    /// Bytes read from the connection.
    func received(_ bytes: some Collection<UInt8>) {
        switch phase {
        case .http:
            reader?.parser.append(bytes)
            serveRequests()
        case .webSocket(let framer):
            handle(framer.receive(bytes), from: framer)
        case .events, .over:
            // An events stream reads nothing more; its end is the stream's end.
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
            if let pending = change {
                guard !pending.submitted, readBody() else { return }
                submitChange()
                continue
            }
            if bodyLeft > 0 {
                bodyLeft -= reader?.parser.skip(upTo: bodyLeft) ?? bodyLeft
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
            guard let outcome = reader?.parser.next() else { return }
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
        let endpoint = WebEndpoint.route(path: head.path)
        // A POST refused before its body is read is closed (the body would be taken for a request).
        let refusalCloses = closes || head.method == "POST"
        let decision = WebDecision.judge(head, access: door.access, overTLS: connection.isEncrypted) { [hub] token in
            hub.credential(bearer: token)
        }
        switch decision {
        case .wrongToken:
            refuseBearer(.refusal(401, "wrong token", closes: refusalCloses), "wrong Bearer token", headOnly: headOnly, endpoint)
        case .invalidToken(let why):
            refuseBearer(.invalidToken(why, closes: refusalCloses), "Bearer \(why)", headOnly: headOnly, endpoint)
        case .throttled(let seconds):
            refuseBearer(.throttled(retryAfterSeconds: seconds, closes: refusalCloses), "Bearer throttled",
                         headOnly: headOnly, endpoint)
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
            var response = HTTPResponse.refusal(status, reason, closes: close || closes,
                                                allow: endpoint?.allowHeader ?? WebEndpoint.allowHeader)
            if endpoint?.isRoomAPI == true { response = response.asAPIRefusal() }
            respond(response, headOnly: headOnly, why: "HTTP \(status) for \(head.method) \(head.path.prefix(100)): \(reason)")
        case .upgrade(let key):
            upgrade(key: key)
        case .change(let room, let grant, let token, let expectsContinue):
            guard hub.storeIsAvailable else {
                // Answered before the body: closed, as every such POST.
                respond(.apiRefusal(503, code: "unavailable", "the backplane is away; nothing was changed", closes: true),
                        headOnly: false, why: "HTTP 503: POST while the backplane is away")
                return
            }
            bodyLeft = 0
            change = PendingChange(room: room, grant: grant, token: token, ifMatch: head.header("if-match"),
                                   closes: closes, bodyLeft: head.contentLength)
            if expectsContinue { connection.writeDown(HTTPResponse.continueHead) }
        case .events(let room, let grant, let token, let request):
            openEvents(room: room, grant: grant, token: token, request: request, origin: head.header("origin"),
                       closes: closes)
        case .serve(let endpoint):
            respond(response(for: endpoint, head: head, closes: closes), headOnly: headOnly, why: "HTTP exchange done")
        }
    }

    /// A failed Bearer: 401; the third on this connection closes it.
    private func refuseBearer(_ response: HTTPResponse, _ what: String, headOnly: Bool, _ endpoint: WebEndpoint?) {
        failedBearers += 1
        let last = failedBearers >= Limits.authAttemptsBeforeClose
        var response = endpoint?.isRoomAPI == true ? response.asAPIRefusal() : response
        response.closesConnection = response.closesConnection || last
        respond(response, headOnly: headOnly, why: last ? "HTTP 401: third failed Bearer (\(what))" : "HTTP 401: \(what)")
    }

    private func response(for endpoint: WebEndpoint, head: HTTPRequestHead, closes: Bool) -> HTTPResponse {
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
            guard hub.storeIsAvailable else { return Self.unavailable(closes: closes) }
            let state = hub.roomState(name)
            let tag = [(name: "ETag", value: EntityTag.header(state.revision))]
            if let wanted = head.header("if-none-match"), EntityTag.noneMatchHits(wanted, revision: state.revision) {
                var notModified = HTTPResponse(status: 304, body: [], extraHeaders: tag, closesConnection: closes)
                notModified.cacheControl = "no-cache"
                return notModified
            }
            var response = HTTPResponse(status: 200, contentType: "application/json",
                                        body: Array(RoomDocument.json(room: name, state: state).utf8),
                                        extraHeaders: tag, closesConnection: closes)
            response.cacheControl = "no-cache"
            return response
        case .roomMembers(let name):
            guard hub.storeIsAvailable else { return Self.unavailable(closes: closes) }
            return HTTPResponse(status: 200, contentType: "application/json",
                                body: Array(RoomDocument.members(room: name, hub.members(of: name)).utf8),
                                closesConnection: closes)
        case .roomEvents:
            // The decision sends every events request to a stream or a refusal.
            return .apiRefusal(400, code: "bad-args", "not an events request", closes: true)
        case .webSocket, .roomList:
            // The decision sends every /ws request to an upgrade or a refusal.
            return .refusal(400, "not a valid WebSocket upgrade", closes: true)
        }
    }

    private static func unavailable(closes: Bool) -> HTTPResponse {
        .apiRefusal(503, code: "unavailable", "the backplane is away", closes: closes)
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
            if self.reader?.parser.holdsPartialHead == true || self.bodyLeft > 0 {
                self.respond(.refusal(408, "request head not complete in time", closes: true), headOnly: false,
                             why: "HTTP request head timed out")
            } else {
                self.end("HTTP connection idle")
            }
        }
    }

    private func end(_ why: String) {
        phase = .over
        stopTimers()
        hub.finish(because: why)
    }

    private func stopTimers() {
        headTimer?.close()
        headTimer = nil
        pingTimer?.close()
        pingTimer = nil
        resumeTimer?.close()
        resumeTimer = nil
    }

    // MARK: - POST /rooms/NAME

    /// Takes what the parser holds of the pending body; true once it is whole.
    private func readBody() -> Bool {
        guard let pending = change, let reader else { return false }
        if pending.bodyLeft > 0 {
            let taken = reader.parser.take(upTo: pending.bodyLeft)
            pending.body += taken
            pending.bodyLeft -= taken.count
        }
        return pending.bodyLeft == 0
    }

    /// The body is read: a change goes up as its line; anything else is answered here.
    private func submitChange() {
        guard let pending = change else { return }
        var ifRevision: UInt64?
        if let ifMatch = pending.ifMatch {
            guard let revision = EntityTag.ifMatchRevision(ifMatch) else {
                change = nil
                respond(.apiRefusal(400, code: "bad-args", "If-Match must be one revision in quotes, such as \"3\"",
                                    closes: pending.closes), headOnly: false, why: "HTTP 400: bad If-Match")
                return
            }
            ifRevision = revision
        }
        switch JSONChangeBody.parse(pending.body, maxLineBytes: door.maxLineBytes) {
        case .failure(let refusal):
            change = nil
            respond(.apiRefusal(refusal.status, code: refusal.error.code.rawValue, refusal.error.message,
                                closes: pending.closes), headOnly: false, why: "HTTP \(refusal.status): change body")
        case .success(let body):
            pending.submitted = true
            pending.body = []
            // The hub may take its time (a backplane's round trip): no head is due
            // meanwhile, and nothing more is read, so pipelined requests wait in the
            // socket rather than in the daemon's memory.
            headTimer?.stop()
            connection.holdReadingUntilDrained()
            hub.act(for: pending.grant, token: pending.token, in: pending.room)
            connection.passUp(Array((body.requestLine(ifRevision: ifRevision) + "\n").utf8))
        }
    }

    /// The session's output while a change is awaited: its first `OK` or `ERR` is the answer.
    private func awaitAnswer(in chunk: some Collection<UInt8>) {
        guard let pending = change, pending.submitted else { return }
        var answer: ChangeAnswer?
        answerLines.forEachMessage(in: Array(chunk)) { line in
            guard answer == nil else { return }
            answer = ChangeAnswer.forReply(ServerLine.parse(String(decoding: line, as: UTF8.self)))
        }
        guard let answer else { return }
        change = nil
        answerLines = WebSocketLines.OutputSplitter()
        connection.releaseReading()
        var response: HTTPResponse
        if answer.status == 200, let revision = answer.revision {
            let state = hub.roomState(pending.room, at: revision) ?? hub.roomState(pending.room)
            response = HTTPResponse(status: 200, contentType: "application/json",
                                    body: Array(RoomDocument.json(room: pending.room, state: state).utf8),
                                    extraHeaders: [("ETag", EntityTag.header(state.revision))],
                                    closesConnection: pending.closes)
        } else {
            let tag = answer.revision.map { [(name: "ETag", value: EntityTag.header($0))] } ?? []
            response = HTTPResponse(status: answer.status, contentType: "application/json",
                                    body: Array((answer.errorBody ?? "{}").utf8), extraHeaders: tag,
                                    closesConnection: pending.closes)
        }
        respond(response, headOnly: false, why: "HTTP exchange done")
        guard case .http = phase else { return }
        // This runs inside the hub's flush: the next request waits for the next loop turn.
        if resumeTimer == nil { resumeTimer = LoopTimer(loop: loop) }
        resumeTimer?.start(afterMilliseconds: 0) { [unowned self] in self.serveRequests() }
    }

    // MARK: - GET /rooms/NAME/events

    private func openEvents(room: String, grant: Grant, token: String?, request: EventStreamRequest, origin: String?,
                            closes: Bool) {
        guard hub.storeIsAvailable else {
            respond(Self.unavailable(closes: closes), headOnly: false, why: "HTTP 503: events while the backplane is away")
            return
        }
        headTimer?.close()
        headTimer = nil
        // A body on the request is skipped; nothing more is read as HTTP.
        reader = nil
        bodyLeft = 0
        hub.act(for: grant, token: token, in: room)
        connection.writeDown(HTTPResponse.eventStreamHead(date: door.date(), server: door.serverHeader, allowOrigin: origin))
        connection.writeDown(ServerSentEvents.retryBlock)
        phase = .events(ServerSentEvents.Translator(room: room))
        pingTimer = LoopTimer(loop: loop)
        armPing()
        // The same lines a client would send: the hub's WATCH decides resume or snapshot.
        var lines = request.memberName.map { "\(Verb.name.rawValue) \($0)\n" } ?? ""
        lines += Verb.watch.line(request.resumeAfter.map(String.init)) + "\n"
        connection.passUp(Array(lines.utf8))
    }

    /// `: ping` once nothing was sent for `pingAfterSeconds`.
    private func armPing() {
        pingTimer?.start(afterMilliseconds: door.eventPingMilliseconds) { [unowned self] in
            guard case .events = self.phase else { return }
            self.connection.writeDown(ServerSentEvents.ping)
            self.armPing()
        }
    }

    private func sendEvents(_ events: [UInt8]) {
        guard !events.isEmpty else { return }
        connection.writeDown(events)
        armPing()
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
        _ = reader?.parser.skip(upTo: bodyLeft)
        bodyLeft = 0
        let early = reader?.parser.takeBuffered() ?? []
        reader = nil
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
        if case .events(var translator) = phase {
            var events: [UInt8] = []
            for chunk in chunks { events += translator.events(from: chunk) }
            phase = .events(translator)
            sendEvents(events)
            // HTTP-API.md: after `denied` the daemon closes the stream
            // (a revoked or expired token closes the session anyway; a
            // revoked room must too).
            if translator.denied { end("events stream denied") }
            return
        }
        if case .http = phase, change != nil {
            for chunk in chunks { awaitAnswer(in: chunk) }
            return
        }
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
        if case .events(let translator) = phase {
            // A room's turn as events, made once for every stream of the room.
            guard !translator.holdsPartialLine, bytes.count > 0, bytes[bytes.count - 1] == UInt8(ascii: "\n") else {
                send([bytes.array])
                return
            }
            let writer = door.eventWriter
            let room = translator.room
            let events = bytes.derived(by: writer) { writer.events(ofLines: $0, room: room) }
            guard events.count > 0 else { return }
            connection.writeDown(shared: events)
            armPing()
            return
        }
        guard case .webSocket(let framer) = phase else {
            send([bytes.array])
            return
        }
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
        if case .events = phase {
            // The stream simply ends; `EventSource` reconnects by itself.
            phase = .over
            stopTimers()
            return
        }
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
        stopTimers()
    }
}
