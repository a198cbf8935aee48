/// The line protocol's one table: every verb the daemon knows, with the
/// shape of its arguments, whether `IF` may guard it, the least role
/// and room grant it needs, and its `HELP` line. The parser, `HELP`, `IF`'s rules, the
/// `EVENT` op names and the client's request encoder all read it, so a new
/// verb is one row here plus the places the compiler then points at (the
/// parser's and reducer's exhaustive switches, the server's `run`).
public enum Verb: String, CaseIterable, Sendable {
    case get = "GET"
    case select = "SELECT"
    case push = "PUSH"
    case pop = "POP"
    case root = "ROOT"
    case next = "NEXT"
    case open = "OPEN"
    case present = "PRESENT"
    case dismiss = "DISMISS"
    case guarded = "IF"
    case watch = "WATCH"
    case unwatch = "UNWATCH"
    case join = "JOIN"
    case screens = "SCREENS"
    case messages = "MESSAGES"
    case stats = "STATS"
    case rooms = "ROOMS"
    case ping = "PING"
    case hello = "HELLO"
    case auth = "AUTH"
    case quit = "QUIT"
    case help = "HELP"
    case whoami = "WHOAMI"
    case name = "NAME"
    case at = "AT"
    case who = "WHO"
    case presence = "PRESENCE"

    /// What follows the verb on the line.
    public enum Arguments: Sendable, Equatable {
        /// Nothing; anything else is `bad-args`.
        case none
        /// A screen name, then the rest of the line as data.
        case screenAndData
        /// The rest of the line as data, possibly empty.
        case data
        /// Exactly one route token.
        case route
        /// Exactly one room name.
        case room
        /// The rest of the line as free text, possibly empty.
        case text
        /// At most one token.
        case optionalToken
        /// The rest of the line, not empty.
        case secret
        /// A revision, then a whole mutation line.
        case guardedMutation
        /// Nothing, or one revision.
        case optionalRevision
        /// Exactly one member name (`Names.isValidMemberName`).
        case memberName
    }

    /// One row of the table.
    public struct Row: Sendable {
        /// How `HELP` and usage errors write the command.
        public var usage: String
        /// What it does, for `HELP`.
        public var summary: String
        public var arguments: Arguments
        /// A change to the room's state: `IF` may guard it, and its `EVENT`
        /// carries `op`.
        public var isMutation: Bool
        /// Who may run it: one column the hub's access policy reads.
        public var access: Access

        /// May be sent by a connection with no role (before `AUTH`).
        public var allowedBeforeAuth: Bool { access.role == .none }
    }

    /// What a verb asks of a connection's grant.
    public struct Access: Sendable, Equatable {
        /// Which room the grant must cover.
        public enum RoomRule: Sendable, Equatable {
            /// None: the verb is not about a room (the catalog, the connection itself).
            case none
            /// The connection's room: it reads or changes it.
            case current
            /// The room named by the argument (`JOIN`), as written.
            case named
            /// Every room: the answer tells about all of them (`STATS`).
            case every
        }

        /// The least role; `.none` means anyone, before `AUTH` too.
        public var role: Role
        public var rooms: RoomRule

        /// Allowed before `AUTH`, in any room.
        public static let anyone = Access(role: .none, rooms: .none)
        /// Any role, in any room: not about a room.
        public static let anyRole = Access(role: .view, rooms: .none)
        /// Reads or watches the connection's room.
        public static let readsRoom = Access(role: .view, rooms: .current)
        /// Changes the connection's room.
        public static let changesRoom = Access(role: .control, rooms: .current)
        /// Moves to the named room.
        public static let entersRoom = Access(role: .view, rooms: .named)
        /// Tells about every room.
        public static let seesEveryRoom = Access(role: .view, rooms: .every)
    }

    public var row: Row {
        switch self {
        case .get: return Row(usage: "GET", summary: "read this room: STATE <rev> <route>",
                              arguments: .none, isMutation: false, access: .readsRoom)
        case .select: return Row(usage: "SELECT <screen> [data]", summary: "stack becomes just this screen",
                                 arguments: .screenAndData, isMutation: true, access: .changesRoom)
        case .push: return Row(usage: "PUSH <screen> [data]", summary: "present a screen on top",
                               arguments: .screenAndData, isMutation: true, access: .changesRoom)
        case .pop: return Row(usage: "POP", summary: "dismiss the top screen",
                              arguments: .none, isMutation: true, access: .changesRoom)
        case .root: return Row(usage: "ROOT", summary: "back to the bottom screen",
                               arguments: .none, isMutation: true, access: .changesRoom)
        case .next: return Row(usage: "NEXT [data]", summary: "replace the top screen by its next one",
                               arguments: .data, isMutation: true, access: .changesRoom)
        case .open: return Row(usage: "OPEN <route>", summary: "deep link, e.g. OPEN /red/blue:hello%20there",
                               arguments: .route, isMutation: true, access: .changesRoom)
        case .present: return Row(usage: "PRESENT <screen> [data]", summary: "show a screen as a sheet over everything",
                                  arguments: .screenAndData, isMutation: true, access: .changesRoom)
        case .dismiss: return Row(usage: "DISMISS", summary: "remove the topmost sheet",
                                  arguments: .none, isMutation: true, access: .changesRoom)
        case .guarded: return Row(usage: "IF <rev> <change>", summary: "run the change only at this revision",
                                  arguments: .guardedMutation, isMutation: false, access: .changesRoom)
        case .watch: return Row(usage: "WATCH [rev]", summary: "receive EVENT lines; with rev, resume after it",
                                arguments: .optionalRevision, isMutation: false, access: .readsRoom)
        case .unwatch: return Row(usage: "UNWATCH", summary: "stop receiving events",
                                  arguments: .none, isMutation: false, access: .anyRole)
        case .join: return Row(usage: "JOIN <room>", summary: "switch room (starts in main)",
                               arguments: .room, isMutation: false, access: .entersRoom)
        case .screens: return Row(usage: "SCREENS", summary: "list the catalog",
                                  arguments: .none, isMutation: false, access: .anyRole)
        case .messages: return Row(usage: "MESSAGES", summary: "the catalog's messages",
                                   arguments: .none, isMutation: false, access: .anyRole)
        case .stats: return Row(usage: "STATS", summary: "server figures",
                                arguments: .none, isMutation: false, access: .seesEveryRoom)
        case .rooms: return Row(usage: "ROOMS", summary: "rooms with state: ROOM <name> <rev> <route> lines",
                                arguments: .none, isMutation: false, access: .anyRole)
        case .ping: return Row(usage: "PING [text]", summary: "answered PONG [text]",
                               arguments: .text, isMutation: false, access: .anyone)
        case .hello: return Row(usage: "HELLO [version]", summary: "protocol version check (this server speaks 1)",
                                arguments: .optionalToken, isMutation: false, access: .anyone)
        case .auth: return Row(usage: "AUTH <token>", summary: "authenticate, when the daemon has a token",
                               arguments: .secret, isMutation: false, access: .anyone)
        case .quit: return Row(usage: "QUIT", summary: "close the connection",
                               arguments: .none, isMutation: false, access: .anyone)
        case .help: return Row(usage: "HELP", summary: "this list",
                               arguments: .none, isMutation: false, access: .anyRole)
        case .whoami: return Row(usage: "WHOAMI", summary: "this connection: YOU <id> <name> <role> <rooms>",
                                 arguments: .none, isMutation: false, access: .anyone)
        case .name: return Row(usage: "NAME <name>", summary: "the name others see for this connection",
                               arguments: .memberName, isMutation: false, access: .anyRole)
        // Looking is not steering: a viewer may detach, and nothing in the room changes.
        case .at: return Row(usage: "AT <route>|-", summary: "look at a route on your own (detached); - follows the room again",
                             arguments: .route, isMutation: false, access: .readsRoom)
        case .who: return Row(usage: "WHO", summary: "the room's members: MEMBER <id> <name> <role> <at> lines",
                              arguments: .none, isMutation: false, access: .readsRoom)
        case .presence: return Row(usage: "PRESENCE [OFF]", summary: "the members, then MEMBER/GONE lines as they change",
                                   arguments: .optionalToken, isMutation: false, access: .readsRoom)
        }
    }

    /// The verb of a line's first token. Verbs compare case-insensitively in
    /// ASCII only: Unicode case mapping would let `\u{17F}elect` (long s) pass
    /// for SELECT and `\u{131}f` (dotless i) for IF.
    public init?(token: Substring) {
        guard token.utf8.count <= Self.longestName else { return nil }
        let upper = String(decoding: token.utf8.map { b in
            b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") ? b - 32 : b
        }, as: UTF8.self)
        self.init(rawValue: upper)
    }

    private static let longestName = allCases.map(\.rawValue.utf8.count).max()!

    /// The verbs `IF` may guard, in table order.
    public static let mutations: [Verb] = allCases.filter(\.row.isMutation)

    /// The mutation's name in `EVENT <rev> <op> <route>`: the verb in lowercase.
    public var op: String { Self.opNames[self] ?? rawValue.lowercased() }

    private static let opNames: [Verb: String] = Dictionary(
        uniqueKeysWithValues: mutations.map { ($0, $0.rawValue.lowercased()) })

    /// A request line without its `\n`: the verb, then each non-empty part,
    /// separated by single spaces. The caller checks the parts hold no line
    /// break (`argumentProblem` says whether they do).
    public func line(_ parts: String?...) -> String { line(parts: parts) }

    /// `line(_:)` for parts already in an array.
    public func line(parts: [String?]) -> String {
        var text = rawValue
        for part in parts {
            guard let part, !part.isEmpty else { continue }
            text += " " + part
        }
        return text
    }

    /// `HELP`'s lines, one per verb, in table order.
    public static let helpLines: [String] =
        ["navsync protocol \(NavSyncVersion.protocolVersion) - one command per line, verbs in any case"]
        + allCases.map { verb in
            let usage = verb.row.usage
            return usage + String(repeating: " ", count: max(1, 26 - usage.count)) + verb.row.summary
        }
}
