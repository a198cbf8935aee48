/// What the daemon serves over HTTP, and which path is which. One table, so
/// a new endpoint is one line here and one case where responses are built.
public enum WebEndpoint: Equatable, Sendable {
    /// The web client page; `room` from `?room=` is read by the page itself.
    case page
    /// The WebSocket speaking the line protocol.
    case webSocket
    case health
    case metrics
    /// `/rooms/NAME`: the room document, and `POST` a change; the name is
    /// checked later (a bad one is 400).
    case room(String)
    /// `/rooms/NAME/members`: the room's members, as `WHO` lists them.
    case roomMembers(String)
    /// `/rooms/NAME/events`: the room as server-sent events.
    case roomEvents(String)
    /// `/rooms`: the rooms with state the caller may see.
    case roomList

    /// The methods of paths that only read; anything else there is 405.
    public static let allowedMethods = ["GET", "HEAD"]
    public static let allowHeader = "GET, HEAD"

    /// The methods this path takes, for the check and for `Allow`.
    public var methods: [String] {
        switch self {
        case .room: return ["GET", "HEAD", "POST"]
        case .roomEvents: return ["GET"]
        default: return Self.allowedMethods
        }
    }

    public var allowHeader: String { methods.joined(separator: ", ") }

    /// The paths of the HTTP API (HTTP-API.md), whose every error carries a JSON body.
    public var isRoomAPI: Bool {
        switch self {
        case .room, .roomMembers, .roomEvents: return true
        default: return false
        }
    }

    /// The room a `/rooms/NAME...` path names, as written.
    public var roomName: String? {
        switch self {
        case .room(let name), .roomMembers(let name), .roomEvents(let name): return name
        default: return nil
        }
    }

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
            let rest = path.dropFirst(prefix.count)
            // A room name holds no `/`, so the first one ends it.
            guard let slash = rest.firstIndex(of: "/") else { return .room(String(rest)) }
            let name = String(rest[..<slash])
            switch rest[slash...] {
            case "/members": return .roomMembers(name)
            case "/events": return .roomEvents(name)
            default: return .room(String(rest))
            }
        }
    }

    /// `/metrics` and `/rooms...` show state: they need a grant (the
    /// anonymous role, or a Bearer token's).
    public var needsToken: Bool {
        switch self {
        case .metrics, .room, .roomMembers, .roomEvents, .roomList: return true
        case .page, .webSocket, .health: return false
        }
    }
}
