/// What the daemon serves over HTTP, and which path is which. One table, so
/// a new endpoint is one line here and one case where responses are built.
public enum WebEndpoint: Equatable, Sendable {
    /// The web client page; `room` from `?room=` is read by the page itself.
    case page
    /// The WebSocket speaking the line protocol.
    case webSocket
    case health
    case metrics
    /// `/rooms/NAME`; the name is checked later (a bad one is 400).
    case room(String)
    /// `/rooms`: the rooms with state the caller may see.
    case roomList

    /// Every method served; anything else on a known path is 405.
    public static let allowedMethods = ["GET", "HEAD"]
    public static let allowHeader = "GET, HEAD"

    /// The endpoint for a request path, nil for an unknown one (404).
    public static func route(path: Substring) -> WebEndpoint? {
        switch path {
        case "/": return .page
        case "/ws": return .webSocket
        case "/healthz": return .health
        case "/metrics": return .metrics
        case "/rooms": return .roomList
        default:
            let prefix = "/rooms/"
            guard path.hasPrefix(prefix) else { return nil }
            return .room(String(path.dropFirst(prefix.count)))
        }
    }

    /// `/metrics` and `/rooms...` show state: they need a grant (the
    /// anonymous role, or a Bearer token's).
    public var needsToken: Bool {
        switch self {
        case .metrics, .room, .roomList: return true
        case .page, .webSocket, .health: return false
        }
    }
}
