import NavSyncCore

/// What to do with one HTTP request, judged from its head alone: the order
/// of the checks is the contract's, in one place.
///
/// 1. `Transfer-Encoding` on a GET or HEAD: 400, closed (its body cannot be
///    framed, and no GET has one).
/// 2. `Host` not an IP literal, `localhost` or an allowed origin's host: 403.
/// 3. Unknown path: 404. Known path, method other than GET/HEAD: 405.
/// 4. `/metrics`, `/rooms`, `/rooms/...` without a grant: 401 (no token
///    and no anonymous role) or a failed Bearer (`wrongToken`;
///    `invalidToken`, or `throttled` unchecked).
/// 5. `/metrics` without a grant for every room, `/rooms/NAME` for a
///    room outside the grant (a bad name too, under a list): 403.
/// 6. `/rooms/NAME` with a bad room name: 400.
/// 7. `/ws`: a GET with a valid upgrade (else 400), from an allowed origin
///    (else 403).
public enum WebDecision: Equatable, Sendable {
    case refuse(status: Int, reason: String, close: Bool)
    case serve(WebEndpoint)
    /// Answer 101 with the accept key made from this `Sec-WebSocket-Key`.
    case upgrade(key: String)
    /// `/rooms`: the rooms this grant covers.
    case listRooms(visibleTo: Grant)
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
    ///   - credential: what the request's Bearer token comes to; asked only
    ///     for the paths that need one.
    public static func judge(_ head: HTTPRequestHead, access: WebAccess, overTLS: Bool = false,
                             credential: () -> Credential) -> WebDecision {
        let readsOnly = WebEndpoint.allowedMethods.contains(head.method)
        if head.hasTransferEncoding && readsOnly {
            return .refuse(status: 400, reason: "Transfer-Encoding on a \(head.method)", close: true)
        }
        // A body this daemon does not read in full (chunked) ends the connection.
        let closeAfter = head.hasTransferEncoding
        guard access.hostAllowed(head.header("host")) else {
            return .refuse(status: 403, reason: "Host not allowed", close: closeAfter)
        }
        guard let endpoint = WebEndpoint.route(path: head.path) else {
            return .refuse(status: 404, reason: "no such path", close: closeAfter)
        }
        guard readsOnly else {
            return .refuse(status: 405, reason: "only GET and HEAD", close: closeAfter)
        }
        if endpoint.needsToken {
            let grant: Grant
            switch credential() {
            case .missing: return .refuse(status: 401, reason: "Authorization: Bearer <token> needed", close: false)
            case .wrong: return .wrongToken
            case .refused(let why): return .invalidToken(why)
            case .throttled(let seconds): return .throttled(retryAfterSeconds: seconds)
            case .granted(let granted): grant = granted
            }
            switch endpoint {
            case .metrics where grant.rooms != .every:
                return .refuse(status: 403, reason: "/metrics needs a grant for every room", close: false)
            case .room(let name) where !grant.covers(name):
                return .refuse(status: 403, reason: "that room is outside this token's grant", close: false)
            case .roomList:
                return .listRooms(visibleTo: grant)
            default:
                break
            }
        }
        switch endpoint {
        case .room(let name) where !Names.isValid(name):
            return .refuse(status: 400, reason: "bad room name", close: false)
        case .webSocket:
            guard head.method == "GET", head.minorVersion == 1, head.asksForWebSocket,
                  head.header("sec-websocket-version") == "13",
                  let key = head.header("sec-websocket-key"), isWebSocketKey(key) else {
                return .refuse(status: 400, reason: "not a valid WebSocket upgrade", close: true)
            }
            guard access.originAllowed(head.header("origin"), host: head.header("host"), overTLS: overTLS) else {
                return .refuse(status: 403, reason: "Origin not allowed", close: true)
            }
            return .upgrade(key: key)
        default:
            return .serve(endpoint)
        }
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
