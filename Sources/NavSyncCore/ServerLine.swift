/// An `ERR <code> <message>` line from the daemon, kept whole because the
/// command-line client prints it verbatim.
public struct ServerError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// The line as received, without its `\n`.
    public var line: String

    public init(code: String, message: String, line: String) {
        self.code = code
        self.message = message
        self.line = line
    }

    public var description: String { line }

    /// `ERR auth-failed throttled, retry in N s`: the daemon did not
    /// look at the token because this address guessed too often; N, the
    /// seconds to wait before trying again, or nil for any other error.
    /// Transient: clients wait and try again rather than give up.
    public var throttledRetrySeconds: Int? {
        guard code == ErrorCode.authFailed.rawValue, message.hasPrefix("throttled, retry in ") else { return nil }
        let rest = message.dropFirst("throttled, retry in ".count)
        guard let seconds = rest.split(separator: " ").first.flatMap({ Int($0) }), seconds >= 0 else { return nil }
        return seconds
    }
}

/// `YOU <id> <name> <role> <rooms>`: who this connection is to the
/// daemon (`WHOAMI`). The role is kept as the daemon wrote it.
public struct Identity: Equatable, Sendable {
    public var id: String
    public var name: String
    /// `control`, `view` or `none`.
    public var role: String
    /// `*`, a comma list, or `-`.
    public var rooms: String

    /// (1.3) A signed token's expiry, whole seconds since 1970 (the sixth
    /// field); nil for a static token.
    public var expires: UInt64?

    public init(id: String, name: String, role: String, rooms: String, expires: UInt64? = nil) {
        self.id = id
        self.name = name
        self.role = role
        self.rooms = rooms
        self.expires = expires
    }

    /// True when this connection may not change a room (a `view` grant, or none).
    public var isViewer: Bool { role != Role.control.rawValue }
}

/// One line the daemon sent, classified by its first token. Parsing never
/// fails: a line the client does not understand is `.other`.
public enum ServerLine: Equatable, Sendable {
    case ok(revision: UInt64)
    /// `STATE <rev> <route>`: a reply to GET, WATCH or JOIN, or a resync.
    case state(revision: UInt64, route: String)
    /// `EVENT <rev> <op> <route>`: only ever unasked, to a watcher.
    case event(revision: UInt64, op: String, route: String)
    /// `CONTINUE <rev>`: the answer to `WATCH <rev>`; the missed events follow.
    case continued(revision: UInt64)
    /// `CATALOG`: unasked, to a watcher; the catalog was reloaded.
    case catalogChanged
    case error(ServerError)
    case pong(String)
    case hello(String)
    /// A `SCREEN ...`, `MESSAGE ...` or `STAT ...` line of a listing; kept as text until its `END`.
    case item(String)
    case end
    case bye
    /// The answer to `WHOAMI`.
    case you(Identity)
    /// `MEMBER <id> <name> <role> <at>`: an item of a presence listing, or a live change.
    case member(Member)
    /// `GONE <id>`: a member left.
    case gone(id: String)
    /// `PRESENCE` alone: an unasked presence listing starts (after `JOIN`, or a resync).
    case presenceListing
    case other(String)

    public static func parse(_ line: String) -> ServerLine {
        let (verb, rest) = split(Substring(line))
        switch verb {
        case "OK":
            guard let revision = UInt64(rest) else { return .other(line) }
            return .ok(revision: revision)
        case "STATE":
            let (rev, route) = split(rest)
            guard let revision = UInt64(rev), !route.isEmpty, !route.contains(" ") else { return .other(line) }
            return .state(revision: revision, route: String(route))
        case "EVENT":
            let (rev, afterRev) = split(rest)
            let (op, route) = split(afterRev)
            guard let revision = UInt64(rev), !op.isEmpty, !route.isEmpty, !route.contains(" ") else {
                return .other(line)
            }
            return .event(revision: revision, op: String(op), route: String(route))
        case "CONTINUE":
            guard let revision = UInt64(rest) else { return .other(line) }
            return .continued(revision: revision)
        case "CATALOG": return rest.isEmpty ? .catalogChanged : .other(line)
        case "ERR":
            let (code, message) = split(rest)
            return .error(ServerError(code: String(code), message: String(message), line: line))
        case "PONG": return .pong(String(rest))
        case "HELLO": return .hello(String(rest))
        case "SCREEN", "STAT", "MESSAGE", "ROOM": return .item(line)
        case "END": return rest.isEmpty ? .end : .other(line)
        case "BYE": return .bye
        case "MEMBER": return Member(line: rest).map(ServerLine.member) ?? .other(line)
        case "GONE": return !rest.isEmpty && !rest.contains(" ") ? .gone(id: String(rest)) : .other(line)
        case "PRESENCE": return rest.isEmpty ? .presenceListing : .other(line)
        case "YOU":
            let fields = rest.split(separator: " ", omittingEmptySubsequences: true)
            // (1.3) A sixth field, a signed token's expiry, may follow.
            guard fields.count == 4 || fields.count == 5 else { return .other(line) }
            var expires: UInt64?
            if fields.count == 5 {
                guard let seconds = UInt64(fields[4]) else { return .other(line) }
                expires = seconds
            }
            return .you(Identity(id: String(fields[0]), name: String(fields[1]), role: String(fields[2]), rooms: String(fields[3]),
                                 expires: expires))
        default: return .other(line)
        }
    }

    /// The first space-separated token and the rest with its leading blanks removed.
    public static func split(_ text: Substring) -> (Substring, Substring) {
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (text, "") }
        let rest = text[space...].drop(while: { $0 == " " || $0 == "\t" })
        return (text[..<space], rest)
    }
}

/// One screen of the daemon's catalog as `SCREENS` reports it. The protocol
/// carries no message, so the client knows only these fields.
public struct CatalogEntry: Equatable, Sendable {
    public var name: String
    public var color: ScreenColor?
    public var next: String?
    public var data: DataRule
    public var title: String
    /// The screen's `message` from the catalog, as `MESSAGES` lists it; nil when it has none.
    public var message: String?

    public init(name: String, color: ScreenColor?, next: String?, data: DataRule, title: String,
                message: String? = nil) {
        self.name = name
        self.color = color
        self.next = next
        self.data = data
        self.title = title
        self.message = message
    }

    /// Reads `SCREEN <name> <color> <next or -> <data> <title>`; nil for anything else.
    public init?(screenLine line: String) {
        let (verb, a) = ServerLine.split(Substring(line))
        let (name, b) = ServerLine.split(a)
        let (color, c) = ServerLine.split(b)
        let (next, d) = ServerLine.split(c)
        let (data, title) = ServerLine.split(d)
        guard verb == "SCREEN", !name.isEmpty, !color.isEmpty, !next.isEmpty, let rule = DataRule(rawValue: String(data))
        else { return nil }
        self.name = String(name)
        self.color = ScreenColor(rawValue: String(color))
        self.next = next == "-" ? nil : String(next)
        self.data = rule
        self.title = title.isEmpty ? String(name) : String(title)
    }
}

extension CatalogEntry {
    /// Reads one `MESSAGE <name> <message>` line of a `MESSAGES` listing;
    /// nil for anything else. The message is the rest of the line, kept as sent.
    public static func message(fromLine line: String) -> (screen: String, message: String)? {
        let (verb, rest) = ServerLine.split(Substring(line))
        let (name, message) = ServerLine.split(rest)
        guard verb == "MESSAGE", !name.isEmpty, !message.isEmpty else { return nil }
        return (String(name), String(message))
    }
}
