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
        default:
            let prefix = "/rooms/"
            guard path.hasPrefix(prefix) else { return nil }
            return .room(String(path.dropFirst(prefix.count)))
        }
    }

    /// `/metrics` and `/rooms/...` show state; with a token they need it.
    public var needsToken: Bool {
        switch self {
        case .metrics, .room: return true
        case .page, .webSocket, .health: return false
        }
    }
}
