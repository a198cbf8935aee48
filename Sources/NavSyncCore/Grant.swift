/// What a connection may do: the least a verb needs (`Verb.Row.access`)
/// is compared with what the connection holds.
public enum Role: String, Sendable, CaseIterable, Comparable {
    /// Nothing but the verbs allowed before `AUTH`: an unauthenticated
    /// connection on a daemon whose `--anonymous` is `none`.
    case none
    /// Reads and watches; never changes a room.
    case view
    /// Every command.
    case control

    public static func < (a: Role, b: Role) -> Bool { a.rank < b.rank }

    private var rank: Int {
        switch self {
        case .none: return 0
        case .view: return 1
        case .control: return 2
        }
    }
}

/// One connection's access: a role, the rooms it applies to and the
/// display name it brings to presence. It comes from a grant line of
/// `--tokens` after `AUTH`, or from `--anonymous` before it. It never holds
/// the token, so it can be shown, compared and logged freely.
public struct Grant: Sendable, Equatable {
    public enum Rooms: Sendable, Equatable {
        /// `*`: every room, present and future.
        case every
        /// A fixed list of room names.
        case only(Set<String>)
    }

    public var role: Role
    public var rooms: Rooms
    public var name: String
    /// For a grant from a signed token: when it ends and the key that
    /// signed it; nil for a static or anonymous grant, which never ends on its own.
    public var lifetime: TokenLifetime?

    public init(role: Role, rooms: Rooms, name: String, lifetime: TokenLifetime? = nil) {
        self.role = role
        self.rooms = rooms
        self.name = name
        self.lifetime = lifetime
    }

    /// The name presence gives a connection no grant line named (PROTOCOL.md *Presence*).
    public static let anonymousName = "anon"

    /// What a connection may do before `AUTH` (`--anonymous`), in every room.
    public static func anonymous(_ role: Role) -> Grant {
        Grant(role: role, rooms: .every, name: anonymousName)
    }

    /// A daemon without tokens: anyone controls everything, as before 1.2.
    public static let unrestricted = anonymous(.control)

    /// Before `AUTH` on a daemon with tokens and `--anonymous none`.
    public static let unauthenticated = anonymous(.none)

    public func covers(_ room: some StringProtocol) -> Bool {
        guard role != .none else { return false }
        switch rooms {
        case .every: return true
        case .only(let names): return names.contains(String(room))
        }
    }

    /// `WHOAMI`'s `<rooms>`: `*`, the names sorted and joined by commas, or
    /// `-` for a connection with no role.
    public var roomsText: String {
        guard role != .none else { return "-" }
        switch rooms {
        case .every: return "*"
        case .only(let names): return names.sorted().joined(separator: ",")
        }
    }

    /// Why this grant may not run a line with this verb, judged before any
    /// other check of the line (after its encoding): `auth-required` when the
    /// connection has no role and the verb needs one (unknown verbs too, so
    /// nothing about the line is told), `forbidden` when the role is too
    /// small or the room is outside the grant. `rest` is the line after the
    /// verb, blanks trimmed; for `JOIN` it is the room as written.
    /// - Parameter room: the room the connection is in.
    public func refusal(verb: Verb?, rest: Substring, room: String) -> ProtocolError? {
        guard let verb else { return role == .none ? Self.authRequired : nil }
        let access = verb.row.access
        guard access.role != .none else { return nil }
        guard role != .none else { return Self.authRequired }
        if access.role > role {
            return ProtocolError(.forbidden, "a \(role.rawValue) grant may not change a room")
        }
        switch access.rooms {
        case .none:
            return nil
        case .current:
            if covers(room) || Self.onlyWithdraws(verb, rest) { return nil }
            return ProtocolError(.forbidden, "room \(room) is outside this connection's grant")
        case .named:
            guard case .only = rooms, !covers(rest) else { return nil }
            return ProtocolError(.forbidden, "that room is outside this connection's grant")
        case .every:
            guard case .every = rooms else {
                return ProtocolError(.forbidden, "\(verb.rawValue) needs a grant for every room")
            }
            return nil
        }
    }

    /// `AT -` and `PRESENCE OFF` only take back what the connection itself
    /// showed or followed: they read nothing of the room and change nothing
    /// in it, so outside the grant (after a reload revoked the room, say)
    /// they are answered, with revision 0 like every reply there, and a
    /// client tidying up after `room revoked` is not told `forbidden`.
    static func onlyWithdraws(_ verb: Verb, _ rest: Substring) -> Bool {
        switch verb {
        case .at: return rest == "-"
        case .presence: return rest.uppercased() == "OFF"
        default: return false
        }
    }

    /// The answer to every line whose verb needs a role, from a connection without one.
    public static let authRequired = ProtocolError(.authRequired, "AUTH <token> first")
}

/// What a request's credential (an HTTP `Authorization: Bearer`)
/// comes to.
public enum Credential: Sendable, Equatable {
    /// A good token's grant, or the anonymous role for a request without one.
    case granted(Grant)
    /// No token, and the anonymous role may do nothing.
    case missing
    /// A token that is no grant's: a failure.
    case wrong
    /// A token that verified but does not hold now (`token expired`):
    /// a failure, answered `401` with `error="invalid_token"`.
    case refused(String)
    /// The request's address is throttled for guessing: the token was
    /// not checked; `401` with `Retry-After`.
    case throttled(retryAfterSeconds: Int)
}
