/// The names a fleet uses in Redis, all under one prefix so several fleets
/// can share a Redis. Every key of a room carries the room's name as a hash
/// tag (`{main}`), so Redis Cluster would keep a room's keys on one node and
/// the change function, which touches them alone, could run there. The
/// fleet-wide keys (room set, epoch, catalog) are each used by commands of
/// their own, never beside a room's keys.
public struct BackplaneKeys: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }

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
    public var changesChannel: String { "\(prefix)changes" }
    /// A message here means: the stored catalog changed, read it again.
    public var catalogChannel: String { "\(prefix)catalog-changed" }
}
