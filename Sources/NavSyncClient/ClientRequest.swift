import NavSyncCore

/// A command a user of the client can send, and the shape of its reply.
///
/// A verb from the core's table with its arguments as text, in the order the
/// verb's row takes them. The text is not judged against a catalog (the
/// client may not have one; the daemon answers a wrong name with its own
/// `ERR`), only by the core's `argumentProblem`, so it reaches the daemon as
/// exactly one line with exactly these arguments.
public struct ClientRequest: Equatable, Sendable {
    /// The protocol verb this request sends.
    public let verb: Verb
    /// Nil and empty arguments are left out of the line.
    private let arguments: [String?]
    /// `IF`'s change: one request, or none for any other verb.
    private let guardedChange: [ClientRequest]

    private init(_ verb: Verb, _ arguments: [String?] = [], guarding change: ClientRequest? = nil) {
        self.verb = verb
        self.arguments = arguments
        self.guardedChange = change.map { [$0] } ?? []
    }

    public static let get = ClientRequest(.get)
    public static func select(screen: String, data: String?) -> ClientRequest { ClientRequest(.select, [screen, data]) }
    public static func push(screen: String, data: String?) -> ClientRequest { ClientRequest(.push, [screen, data]) }
    public static let pop = ClientRequest(.pop)
    public static let root = ClientRequest(.root)
    public static func next(data: String?) -> ClientRequest { ClientRequest(.next, [data]) }
    public static func open(route: String) -> ClientRequest { ClientRequest(.open, [route]) }
    public static func present(screen: String, data: String?) -> ClientRequest { ClientRequest(.present, [screen, data]) }
    public static let dismiss = ClientRequest(.dismiss)
    /// `IF <rev> <change>`: the change only while the room is at `revision`.
    public static func guarded(revision: UInt64, change: ClientRequest) -> ClientRequest {
        ClientRequest(.guarded, [String(revision)], guarding: change)
    }
    public static let screens = ClientRequest(.screens)
    public static let stats = ClientRequest(.stats)
    /// The rooms with state (`ROOMS`, a navsync addition to the contract).
    public static let rooms = ClientRequest(.rooms)
    public static func ping(_ text: String) -> ClientRequest { ClientRequest(.ping, [text]) }
    /// The room's members (`WHO`).
    public static let who = ClientRequest(.who)
    /// The name presence shows for this connection (`NAME`).
    public static func name(_ name: String) -> ClientRequest { ClientRequest(.name, [name]) }
    /// Detach and look at `route` on one's own (`AT <route>`); nil follows the room again (`AT -`).
    public static func look(at route: String?) -> ClientRequest { ClientRequest(.at, [route ?? "-"]) }
    /// This connection's member id, name and role (`WHOAMI`).
    public static let whoami = ClientRequest(.whoami)
    /// (1.3) A fresh token for this connection (`AUTH`): how a signed token is renewed.
    public static func auth(token: String) -> ClientRequest { ClientRequest(.auth, [token]) }

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
        /// `YOU <id> <name> <role> <rooms>`
        case identity
    }

    /// The protocol line, without its `\n`, written by the protocol table.
    public var line: String {
        verb.line(parts: arguments + guardedChange.map(\.line))
    }

    public var expectation: Expectation {
        if verb.row.isMutation || verb == .guarded { return .ok }
        switch verb {
        case .get: return .state
        case .ping: return .pong
        case .name, .at, .auth: return .ok
        case .whoami: return .identity
        default: return .listing  // SCREENS, STATS, ROOMS, WHO: the other verbs a request is made of
        }
    }

    /// Why this request cannot be written as one protocol line, or nil when it can.
    /// A line break inside an argument would end the line early and smuggle in a second command.
    public var problem: String? {
        if let change = guardedChange.first {
            return Verb.guardProblem(change.verb) ?? change.problem
        }
        return verb.argumentProblem(arguments)
    }
}
