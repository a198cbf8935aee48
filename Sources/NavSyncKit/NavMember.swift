import NavSyncCore

/// Someone in the room: a connection that watches it, on this daemon
/// or another daemon of the fleet.
public struct NavMember: Hashable, Sendable, Identifiable {
    /// Unique among the fleet's connections for the connection's life.
    public let id: String
    /// Whatever the connection said with `NAME` (or its grant's name, else `anon`).
    public let name: String
    public let role: NavRole
    /// Nil while the member follows the room; otherwise the route it looks
    /// at on its own, exactly as the daemon wrote it (never decoded into a
    /// screen type, so a screen this program does not know fails nothing).
    public let at: String?

    init(_ member: Member) {
        id = member.id
        name = member.name
        role = member.role == .control ? .control : .view
        at = member.at
    }
}
