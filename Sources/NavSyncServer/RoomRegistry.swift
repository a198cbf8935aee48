import NavSyncCore

/// The rooms the hub holds in memory and the counts that follow from them.
///
/// A room is kept while it has a state or a watcher and dropped the moment
/// it has neither, so a client that walks through a million room names
/// leaves nothing behind. The counts (`changedCount`, `watchersTotal`) are
/// kept here, beside the only code that adds and removes, so they cannot
/// drift from the table: `--max-rooms` and `STATS` read them.
///
/// Pure bookkeeping: it sends nothing and knows no store; the hub decides
/// when a room changes and tells the fan-out itself.
/// Must be used on the loop thread only.
final class RoomRegistry {
    private var byName: [String: Room] = [:]
    /// Rooms whose state is not nil (changed at least once).
    private(set) var changedCount = 0
    /// Sessions watching, in every room.
    private(set) var watchersTotal = 0
    private let limits: Limits
    /// What a room never changed reads as (the catalog's first screen at
    /// revision 0). A reload may not change the initial screen, so this
    /// holds for the daemon's life.
    private let initialStack: [RouteEntry]

    init(states: [String: RoomState], initialStack: [RouteEntry], limits: Limits) {
        self.limits = limits
        self.initialStack = initialStack
        for (name, state) in states {
            byName[name] = Room(state: state, limits: limits)
        }
        changedCount = states.count
    }

    /// The room's state as a client reads it: its own, or the initial stack at revision 0.
    func state(of name: String) -> RoomState {
        byName[name]?.state ?? RoomState(stack: initialStack, revision: 0)
    }

    /// The room's own state, nil while it was never changed (or not held).
    func storedState(of name: String) -> RoomState? { byName[name]?.state }

    /// The room if it is held, without making it.
    func existing(_ name: String) -> Room? { byName[name] }

    /// The room, made (empty) if it was not held.
    @discardableResult
    func room(named name: String) -> Room {
        if let room = byName[name] { return room }
        let room = Room(limits: limits)
        byName[name] = room
        return room
    }

    /// Forgets the room when it holds nothing worth keeping.
    func dropIfIdle(_ name: String) {
        if let room = byName[name], room.isIdle { byName[name] = nil }
    }

    /// Sets a room's state (nil: back to never changed) and keeps the count
    /// of changed rooms. Returns the room, nil when the state is nil and the
    /// room was not held (nothing to do).
    @discardableResult
    func setState(_ state: RoomState?, of name: String) -> Room? {
        guard let room = state == nil ? byName[name] : room(named: name) else { return nil }
        setState(state, of: room)
        return room
    }

    /// The same for a room already in hand (the event path holds it).
    func setState(_ state: RoomState?, of room: Room) {
        if room.state == nil && state != nil { changedCount += 1 }
        if room.state != nil && state == nil { changedCount -= 1 }
        room.state = state
    }

    /// The session starts watching the room (made if needed); returns it.
    func addWatcher(_ session: Session, to name: String) -> Room {
        let room = room(named: name)
        room.addWatcher(session)
        watchersTotal += 1
        return room
    }

    /// The session stops watching the room, which is dropped if that left it idle.
    func removeWatcher(_ session: Session, from name: String) {
        guard let room = byName[name] else { return }
        room.removeWatcher(session)
        watchersTotal -= 1
        dropIfIdle(name)
    }

    /// How many watch this room.
    func watcherCount(of name: String) -> Int { byName[name]?.watchers.count ?? 0 }

    /// Rooms that were changed, with their states, sorted by name so a
    /// listing is stable and a script can diff it.
    func changedRoomsByName() -> [(name: String, state: RoomState)] {
        byName.compactMap { name, room in room.state.map { (name: name, state: $0) } }
            .sorted { $0.name < $1.name }
    }

    /// Every changed room's state.
    var statesByName: [String: RoomState] { byName.compactMapValues(\.state) }

    /// Drops rooms that hold nothing (after a catalog reload, say).
    func dropIdleRooms() {
        for (name, room) in byName where room.isIdle {
            byName[name] = nil
        }
    }

    /// Rooms held in memory, changed or watched.
    var heldCount: Int { byName.count }

    /// The names of the rooms held in memory, in no order.
    var heldNames: [String] { Array(byName.keys) }
}
