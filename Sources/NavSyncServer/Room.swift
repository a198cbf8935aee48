import NavSyncCore

/// One room: its state once it has been changed, and who is watching it.
final class Room {
    /// nil until the first change; until then the room reads as the catalog's
    /// initial stack at revision 0 and does not count against `--max-rooms`.
    var state: RoomState?
    var watchers: [ObjectIdentifier: Session] = [:]

    init(state: RoomState? = nil) {
        self.state = state
    }

    /// A room that holds nothing worth keeping in memory.
    var isIdle: Bool { state == nil && watchers.isEmpty }
}
