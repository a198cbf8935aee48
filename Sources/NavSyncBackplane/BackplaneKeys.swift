/// The names a fleet uses in Redis, all under one prefix so several fleets
/// can share a Redis. Keys live in the fleet's database; channels do not
/// (Redis pub/sub is server-wide), so their names carry the database number
/// too. Every key of a room carries the room's name as a hash
/// tag (`{main}`), so Redis Cluster would keep a room's keys on one node and
/// the change function, which touches them alone, could run there. The
/// fleet-wide keys (room set, epoch, catalog) are each used by commands of
/// their own, never beside a room's keys.
public struct BackplaneKeys: Sendable, Equatable {
    public let prefix: String
    /// The Redis database the fleet's keys are in (`redis://HOST:PORT/DB`).
    public let database: Int

    public init(prefix: String, database: Int = 0) {
        self.prefix = prefix
        self.database = database
    }

    /// Printable ASCII without blanks or braces (a brace would move the hash tag), 1–64 bytes.
    public static func isValidPrefix(_ prefix: String) -> Bool {
        !prefix.isEmpty && prefix.utf8.count <= 64
            && prefix.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "{") && $0 != UInt8(ascii: "}") }
    }

    /// A hash: `rev`, `route` and `tag` of the room's current state, and
    /// `hbytes`, the bytes its history holds.
    public func state(_ room: String) -> String { "\(prefix){\(room)}:state" }
    /// A stream of the room's recent changes, entry id `<rev>-0`, fields `op`, `route` and `tag`.
    public func history(_ room: String) -> String { "\(prefix){\(room)}:history" }
    /// A set of the rooms holding state (for `--max-rooms` and start-up);
    /// a room enters it (the admit function) before its first change.
    public var rooms: String { "\(prefix)rooms" }
    /// A random value set by the first daemon of the fleet; a different one
    /// means Redis lost or replaced the fleet's data.
    public var epoch: String { "\(prefix)epoch" }
    /// The fleet's catalog as `--screens` JSON.
    public var catalog: String { "\(prefix)catalog" }
    /// Every change, published as `<epoch> <room> <rev> <tag> <op> <route>`.
    public var changesChannel: String { "\(prefix)changes" + databaseSuffix }
    /// A message here means: the stored catalog changed, read it again.
    public var catalogChannel: String { "\(prefix)catalog-changed" + databaseSuffix }
    /// A hash of the room's members: field the member id, value
    /// `<name> <role> <at>` (`PresenceMessage`). The daemon a member is on
    /// is the part of its id before the first `.`.
    public func members(_ room: String) -> String { "\(prefix){\(room)}:members" }
    /// A set of the rooms that have (or had) members, read at start-up.
    public var presenceRooms: String { "\(prefix)presence-rooms" }
    /// Present while the daemon with this tag is alive: it sets it
    /// with an expiry and renews it with its heartbeat, so its members are
    /// gone once it expires.
    public func daemon(_ tag: String) -> String { "\(prefix)daemon:\(tag)" }
    /// Member changes, a turn's worth per message (`PresenceMessage`).
    public var presenceChannel: String { "\(prefix)presence" + databaseSuffix }

    /// Ends every channel name, so fleets that differ only in database never
    /// hear each other. No two (prefix, database) pairs give the same name: a
    /// name ends in `:db` and the number, which fixes the number (the longest
    /// run of digits at the end); what is left ends in `changes` or
    /// `catalog-changed`, which fixes the prefix. No brace is added, so a
    /// channel name holds no hash tag.
    private var databaseSuffix: String { ":db\(database)" }
}
