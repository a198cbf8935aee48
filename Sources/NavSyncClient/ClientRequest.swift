import NavSyncCore

/// A command a user of the client can send, and the shape of its reply.
public indirect enum ClientRequest: Equatable, Sendable {
    case get
    case select(screen: String, data: String?)
    case push(screen: String, data: String?)
    case pop
    case root
    case next(data: String?)
    case open(route: String)
    case present(screen: String, data: String?)
    case dismiss
    /// `IF <rev> <change>`: the change only while the room is at `revision`.
    case guarded(revision: UInt64, change: ClientRequest)
    case screens
    case stats
    /// The rooms with state (`ROOMS`, a navsync addition to the contract).
    case rooms
    case ping(String)

    /// What the daemon answers with when the command succeeds.
    public enum Expectation: Equatable, Sendable {
        /// `OK <rev>`
        case ok
        /// `STATE <rev> <route>`
        case state
        /// `PONG [text]`
        case pong
        /// Item lines, then `END`.
        case listing
    }

    /// The protocol verb this request sends.
    public var verb: Verb {
        switch self {
        case .get: return .get
        case .select: return .select
        case .push: return .push
        case .pop: return .pop
        case .root: return .root
        case .next: return .next
        case .open: return .open
        case .present: return .present
        case .dismiss: return .dismiss
        case .guarded: return .guarded
        case .screens: return .screens
        case .stats: return .stats
        case .rooms: return .rooms
        case .ping: return .ping
        }
    }

    /// The protocol line, without its `\n`, written by the protocol table.
    public var line: String {
        switch self {
        case .select(let screen, let data), .push(let screen, let data), .present(let screen, let data):
            return verb.line(screen, data)
        case .next(let data): return verb.line(data)
        case .open(let route): return verb.line(route)
        case .guarded(let revision, let change): return verb.line(String(revision), change.line)
        case .ping(let text): return verb.line(text)
        case .get, .pop, .root, .dismiss, .screens, .stats, .rooms: return verb.line()
        }
    }

    public var expectation: Expectation {
        switch self {
        case .get: return .state
        case .select, .push, .pop, .root, .next, .open, .present, .dismiss, .guarded: return .ok
        case .screens, .stats, .rooms: return .listing
        case .ping: return .pong
        }
    }

    /// Why this request cannot be written as one protocol line, or nil when it can.
    /// A line break inside an argument would end the line early and smuggle in a second command.
    public var problem: String? {
        switch self {
        case .select(let screen, let data), .push(let screen, let data), .present(let screen, let data):
            if screen.isEmpty { return "a screen name is needed" }
            if screen.contains(where: Self.isBlankOrBreak) { return "a screen name has no spaces or line breaks" }
            return Self.lineBreakProblem(data)
        case .next(let data): return Self.lineBreakProblem(data)
        case .open(let route):
            if route.isEmpty { return "a route is needed, such as /red/blue" }
            if route.contains(where: Self.isBlankOrBreak) { return "a route has no spaces or line breaks (encode them as %20)" }
            return nil
        case .ping(let text): return Self.lineBreakProblem(text)
        case .guarded(_, let change):
            guard change.verb.row.isMutation else { return "IF guards a change, not \(change.verb.rawValue)" }
            return change.problem
        case .get, .pop, .root, .dismiss, .screens, .stats, .rooms: return nil
        }
    }

    private static func lineBreakProblem(_ text: String?) -> String? {
        guard let text, text.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return nil }
        return "data cannot contain a line break"
    }

    private static func isBlankOrBreak(_ c: Character) -> Bool {
        c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\r\n"
    }
}
