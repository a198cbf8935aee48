import NavSyncCore

/// What presence knows about one connection: the name and the route
/// it gave (kept from before it watches, shown once it is a member), and,
/// while it follows a room's presence, where it is in that room's lines.
struct SessionPresence {
    /// Set by `NAME`; nil shows the grant's name.
    var name: String?
    /// Set by `AT <route>`; nil while it follows the room.
    var at: String?
    /// The room whose presence it follows (`PRESENCE`), nil when it does not.
    var followed: RoomPresence?
    /// Its index in `followed.followers`.
    var followerSlot = -1
    /// How many of `followed`'s lines of turn `turn` it has taken.
    var cursor = 0
    var turn: UInt64 = 0
    /// Its presence lines were dropped (`--max-pending`): a listing is owed
    /// once its socket drains, after the `STATE` resync if it watches.
    var owesListing = false

    var follows: Bool { followed != nil }
}
