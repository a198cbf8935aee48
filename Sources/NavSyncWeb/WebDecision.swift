import NavSyncCore

/// What to do with one HTTP request, judged from its head alone: the order
/// of the checks is the contract's, in one place.
///
/// 1. `Transfer-Encoding` on a GET or HEAD: 400, closed (its body cannot be
///    framed, and no GET has one).
/// 2. `Host` not an IP literal, `localhost` or an allowed origin's host: 403.
/// 3. Unknown path: 404. Known path, method it does not take: 405 with its
///    `Allow` (`POST` on `/rooms/NAME` only; `/rooms/NAME/events` is `GET` only).
/// 4. `/metrics`, `/rooms`, `/rooms/...` without a grant: 401 (an
///    `Authorization` header of another scheme than Bearer, or no token
///    and no anonymous role, or a `POST` with no token where the anonymous
///    role is below `control`) or a failed Bearer (`wrongToken`;
///    `invalidToken`, or `throttled` unchecked). On `/rooms/NAME/events`
///    the token may come as `?token=` instead (`EventSource` sends no headers).
/// 5. `/metrics` without a grant for every room, `/rooms/NAME...` for a
///    room outside the grant (a bad name too, under a list): 403.
/// 6. `/rooms/NAME...` with a bad room name: 400.
/// 7. `POST` with a token whose grant is not `control`: 403; with an `Origin` that is not
///    the daemon's own nor allowed: 403; `Transfer-Encoding` or no
///    `Content-Length`: 411; a body over 8 KiB: 413; a `Content-Type`
///    other than `application/json`: 415.
/// 8. `/rooms/NAME/events` with a foreign `Origin`: 403; a bad `?since=`
///    or `?name=`: 400.
/// 9. `/ws`: a GET with a valid upgrade (else 400), from an allowed origin
///    (else 403).
///
/// Every refusal of a `POST` closes the connection: its body is not read,
/// so nothing of it may be taken for the next request.
public enum WebDecision: Equatable, Sendable {
    case refuse(status: Int, reason: String, close: Bool)
    case serve(WebEndpoint)
    /// Answer 101 with the accept key made from this `Sec-WebSocket-Key`.
    case upgrade(key: String)
    /// `/rooms`: the rooms this grant covers.
    case listRooms(visibleTo: Grant)
    /// `POST /rooms/NAME`: read the body, then make the change for this
    /// grant (`token`: the credential it came from, nil for the anonymous role).
    case change(room: String, grant: Grant, token: String?, expectsContinue: Bool)
    /// `GET /rooms/NAME/events`: a stream for this grant.
    case events(room: String, grant: Grant, token: String?, request: EventStreamRequest)
    /// A Bearer token that is no grant's: 401, counted as a failure
    /// (the third on a connection closes it).
    case wrongToken
    /// A Bearer token that verified but does not hold now: 401 with
    /// `error="invalid_token"`, a failure like `wrongToken`.
    case invalidToken(String)
    /// The address is throttled for guessing: 401 with `Retry-After`,
    /// a failure like `wrongToken`.
    case throttled(retryAfterSeconds: Int)

    /// - Parameters:
    ///   - overTLS: the request came inside TLS, so the daemon's own origin is `https://` + `Host`.
    ///   - credential: what a token (nil: none presented) comes to; asked
    ///     only for the paths that need one.
    public static func judge(_ head: HTTPRequestHead, access: WebAccess, overTLS: Bool = false,
                             credential: (String?) -> Credential) -> WebDecision {
        let readsOnly = WebEndpoint.allowedMethods.contains(head.method)
        if head.hasTransferEncoding && readsOnly {
            return .refuse(status: 400, reason: "Transfer-Encoding on a \(head.method)", close: true)
        }
        // A body this daemon does not read (chunked, or a POST refused
        // before its body) ends the connection.
        let closeAfter = head.hasTransferEncoding || head.method == "POST"
        guard access.hostAllowed(head.header("host")) else {
            return .refuse(status: 403, reason: "Host not allowed", close: closeAfter)
        }
        guard let endpoint = WebEndpoint.route(path: head.path) else {
            return .refuse(status: 404, reason: "no such path", close: closeAfter)
        }
        guard endpoint.methods.contains(head.method) else {
            return .refuse(status: 405, reason: "only \(endpoint.allowHeader)", close: closeAfter)
        }
        var grant = Grant.unauthenticated
        var token: String?
        if endpoint.needsToken {
            switch WebAccess.credential(inAuthorization: head.header("authorization")) {
            case .none: break
            case .bearer(let presented): token = presented
            case .otherScheme:
                return .refuse(status: 401, reason: "Authorization: Bearer <token> is the only credential taken",
                               close: closeAfter)
            }
            if token == nil, case .roomEvents = endpoint { token = EventStreamRequest.token(inQuery: head.query) }
            switch credential(token) {
            case .missing: return .refuse(status: 401, reason: "Authorization: Bearer <token> needed", close: closeAfter)
            case .wrong: return .wrongToken
            case .refused(let why): return .invalidToken(why)
            case .throttled(let seconds): return .throttled(retryAfterSeconds: seconds)
            case .granted(let granted): grant = granted
            }
            // A change with no credential on a daemon whose anonymous role
            // cannot make one: a credential is needed, so 401 (the web page
            // and scripts then know to offer a token), not 403, which is
            // for a token that was judged and does not allow it.
            if token == nil, head.method == "POST", grant.role < .control {
                return .refuse(status: 401, reason: "a change: Authorization: Bearer <control token> needed",
                               close: closeAfter)
            }
            if let name = endpoint.roomName, !grant.covers(name) {
                return .refuse(status: 403, reason: "that room is outside this token's grant", close: closeAfter)
            }
            switch endpoint {
            case .metrics where grant.rooms != .every:
                return .refuse(status: 403, reason: "/metrics needs a grant for every room", close: false)
            case .roomList:
                return .listRooms(visibleTo: grant)
            default:
                break
            }
        }
        if let name = endpoint.roomName, !Names.isValid(name) {
            return .refuse(status: 400, reason: "bad room name", close: closeAfter)
        }
        let originAllowed = access.originAllowed(head.header("origin"), host: head.header("host"), overTLS: overTLS)
        switch endpoint {
        case .room(let name) where head.method == "POST":
            return judgeChange(head, room: name, grant: grant, token: token, originAllowed: originAllowed)
        case .roomEvents(let name):
            guard originAllowed else { return .refuse(status: 403, reason: "Origin not allowed", close: false) }
            switch EventStreamRequest.read(query: head.query, lastEventID: head.header("last-event-id")) {
            case .failure(let refusal): return .refuse(status: 400, reason: refusal.message, close: false)
            case .success(let request): return .events(room: name, grant: grant, token: token, request: request)
            }
        case .webSocket:
            guard head.method == "GET", head.minorVersion == 1, head.asksForWebSocket,
                  head.header("sec-websocket-version") == "13",
                  let key = head.header("sec-websocket-key"), isWebSocketKey(key) else {
                return .refuse(status: 400, reason: "not a valid WebSocket upgrade", close: true)
            }
            guard originAllowed else {
                return .refuse(status: 403, reason: "Origin not allowed", close: true)
            }
            return .upgrade(key: key)
        default:
            return .serve(endpoint)
        }
    }

    /// The checks a `POST` passes before its body is read; each refusal closes.
    private static func judgeChange(_ head: HTTPRequestHead, room: String, grant: Grant, token: String?,
                                    originAllowed: Bool) -> WebDecision {
        guard grant.role >= .control else {
            return .refuse(status: 403, reason: "a change needs a control grant", close: true)
        }
        guard originAllowed else { return .refuse(status: 403, reason: "Origin not allowed", close: true) }
        guard !head.hasTransferEncoding, head.header("content-length") != nil else {
            return .refuse(status: 411, reason: "a change needs a Content-Length (and no Transfer-Encoding)", close: true)
        }
        guard head.contentLength <= JSONChangeBody.maxBodyBytes else {
            return .refuse(status: 413, reason: "a change is at most \(JSONChangeBody.maxBodyBytes) bytes", close: true)
        }
        guard head.mediaType == "application/json" else {
            return .refuse(status: 415, reason: "a change is sent as Content-Type: application/json", close: true)
        }
        return .change(room: room, grant: grant, token: token,
                       expectsContinue: head.tokens("expect").contains("100-continue"))
    }

    /// RFC 6455: the key is 16 random bytes in base64, so 22 base64
    /// characters and `==`.
    static func isWebSocketKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                return true
            default:
                return false
            }
        }
    }
}
