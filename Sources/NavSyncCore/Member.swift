/// One member of a room as presence shows it: a connection that
/// watches the room, on this daemon or (with a backplane) another one.
public struct Member: Sendable, Equatable, Hashable {
    /// Unique among the fleet's connections for as long as the daemon runs.
    public var id: String
    public var name: String
    public var role: Role
    /// The route it looks at on its own, as `STATE` writes it; nil while it
    /// follows the room.
    public var at: String?

    public init(id: String, name: String, role: Role, at: String? = nil) {
        self.id = id
        self.name = name
        self.role = role
        self.at = at
    }

    /// Reads `<id> <name> <role> <at>`, the fields of a `MEMBER` line after its verb.
    public init?(line fields: Substring) {
        let parts = fields.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 4, let role = Role(rawValue: String(parts[2])) else { return nil }
        self.init(id: String(parts[0]), name: String(parts[1]), role: role,
                  at: parts[3] == "-" ? nil : String(parts[3]))
    }

    /// The `<at>` field: the route, or `-` while following.
    public var atText: String { at ?? "-" }

    /// Member ids: `[A-Za-z0-9._-]{1,40}`.
    public static func isValidID<S: StringProtocol>(_ id: S) -> Bool {
        id.utf8.count <= maxIDLength && Names.isValid(id)
    }

    public static let maxIDLength = 40
}

extension Wire {
    /// `MEMBER <id> <name> <role> <at>`: a member arrived or changed.
    public static func member(_ member: Member) -> [UInt8] {
        line("MEMBER \(member.id) \(member.name) \(member.role.rawValue) \(member.atText)")
    }

    /// `GONE <id>`: a member left.
    public static func gone(id: String) -> [UInt8] { line("GONE \(id)") }

    /// The members, one `MEMBER` line each, then `END`. Unasked (after
    /// `JOIN`, or as a resync) it starts with a `PRESENCE` line, so a client
    /// knows to replace its list.
    public static func members(_ members: some Sequence<Member>, unasked: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = unasked ? Array("PRESENCE\n".utf8) : []
        for member in members { bytes += Wire.member(member) }
        bytes += Array("END\n".utf8)
        return bytes
    }
}
