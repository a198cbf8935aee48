/// A change to a room's stack. Parsing has already checked everything the
/// line and the catalog alone can tell (names, data rules, route depth).
public enum Mutation: Sendable, Equatable {
    case select(RouteEntry)
    case push(RouteEntry)
    case pop
    case root
    /// Replace the top entry by its catalog `next`, carrying this data.
    case next(data: String?)
    /// Stack and sheets become this navigation (a deep link).
    case open(Navigation)
    /// Put a sheet over everything.
    case present(RouteEntry)
    /// Remove the topmost sheet.
    case dismiss

    public var verb: Verb {
        switch self {
        case .select: return .select
        case .push: return .push
        case .pop: return .pop
        case .root: return .root
        case .next: return .next
        case .open: return .open
        case .present: return .present
        case .dismiss: return .dismiss
        }
    }

    /// The lowercase verb used as `<op>` in `EVENT` lines.
    public var op: String { verb.op }
}

/// One parsed protocol line.
public enum Command: Sendable, Equatable {
    case get
    /// A mutation, optionally guarded by `IF <rev>`.
    case mutate(Mutation, ifRevision: UInt64?)
    /// Subscribe; with a revision, resume after it (`WATCH <rev>`).
    case watch(after: UInt64?)
    case unwatch
    case join(room: String)
    case screens
    case messages
    case stats
    /// The rooms this daemon holds state for, by name.
    case rooms
    case ping(text: String)
    case hello(version: String?)
    case auth(token: String)
    case quit
    case help
    /// This connection's identity and grant.
    case whoami
    /// The display name presence shows for this connection.
    case name(String)
    /// Detach and look at this navigation on its own; nil follows the room again.
    case at(Navigation?)
    /// The room's members, once.
    case who
    /// Follow the room's members (`true`), or stop (`PRESENCE OFF`).
    case presence(on: Bool)

    /// Commands answered from, or changing, a room's state: with a backplane
    /// they are refused (`unavailable`) while the store cannot be reached.
    public var needsRoomState: Bool {
        switch self {
        case .get, .mutate, .watch, .join, .who, .presence(on: true): return true
        default: return false
        }
    }

    public var verb: Verb {
        switch self {
        case .get: return .get
        case .mutate(let mutation, let guarded): return guarded == nil ? mutation.verb : .guarded
        case .watch: return .watch
        case .unwatch: return .unwatch
        case .join: return .join
        case .screens: return .screens
        case .messages: return .messages
        case .stats: return .stats
        case .rooms: return .rooms
        case .ping: return .ping
        case .hello: return .hello
        case .auth: return .auth
        case .quit: return .quit
        case .help: return .help
        case .whoami: return .whoami
        case .name: return .name
        case .at: return .at
        case .who: return .who
        case .presence: return .presence
        }
    }

    /// Commands a connection may send before it has authenticated.
    public var allowedBeforeAuth: Bool { verb.row.allowedBeforeAuth }
}
