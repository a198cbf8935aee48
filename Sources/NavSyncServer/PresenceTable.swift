import NavSyncCore

/// Every room's presence (`RoomPresence`) by name, the fleet-wide member
/// count, which rooms have changes to settle into lines, and which have lines
/// this turn.
///
/// Pure bookkeeping, like `RoomRegistry`: it sends nothing itself. A room's
/// presence is kept while it has a member, a follower, a change to settle or
/// lines to hand out. Must be used on the loop thread only.
final class PresenceTable {
    private var byName: [String: RoomPresence] = [:]
    /// Members of every room (of the fleet, with a backplane).
    private(set) var membersTotal = 0
    /// Rooms with changes not yet settled into lines, each once (its
    /// `isListedForSettling` says it is here: a room settled early, for a
    /// new follower, and changed again in the same turn is not listed twice).
    private var roomsWithPendingChanges: [RoomPresence] = []
    /// Rooms whose `turnLines` are not empty.
    private(set) var roomsWithTurnLines: [RoomPresence] = []
    /// What became of this daemon's own members since the store was last told.
    private(set) var settledForStore: [(room: String, member: RoomPresence.SettledMember)] = []

    func existing(_ name: String) -> RoomPresence? { byName[name] }

    func room(named name: String) -> RoomPresence {
        if let room = byName[name] { return room }
        let room = RoomPresence(name: name)
        byName[name] = room
        return room
    }

    func dropIfIdle(_ room: RoomPresence) {
        if room.isIdle, byName[room.name] === room { byName[room.name] = nil }
    }

    func memberCount(of name: String) -> Int { byName[name]?.count ?? 0 }

    /// Adds or changes a member; its line is made when the room settles.
    func set(_ member: Member, in name: String, isLocal: Bool) {
        let room = room(named: name)
        let wasMember = room.member(member.id) != nil
        guard room.set(member, isLocal: isLocal) else { return }
        if !wasMember { membersTotal += 1 }
        listForSettling(room)
    }

    /// Removes a member, if it is one; its line is made when the room settles.
    func remove(_ id: String, from name: String, isLocal: Bool) {
        guard let room = byName[name] else { return }
        guard room.remove(id, isLocal: isLocal) else { return }
        membersTotal -= 1
        listForSettling(room)
    }

    /// Settles one room's changes into this turn's lines (before a new
    /// follower's listing). Returns the followers to mark for the flush
    /// when the room's turn got its first lines.
    func settle(_ room: RoomPresence) -> [Session] {
        guard room.hasPendingChanges else { return [] }
        let hadLines = !room.turnLines.isEmpty
        for member in room.settle() { settledForStore.append((room.name, member)) }
        // The room stays in `roomsWithPendingChanges` until `settleAll`, which skips it then.
        guard !hadLines, !room.turnLines.isEmpty else { return [] }
        roomsWithTurnLines.append(room)
        return room.followers
    }

    /// Settles every room's changes into lines: at the start of a flush,
    /// and after it for the changes made while it ran (sessions that ended
    /// then), which start the next turn. Returns the followers to mark.
    func settleAll() -> [Session] {
        var reached: [Session] = []
        for room in roomsWithPendingChanges {
            room.isListedForSettling = false
            reached += settle(room)
            dropIfIdle(room)
        }
        roomsWithPendingChanges.removeAll(keepingCapacity: true)
        return reached
    }

    private func listForSettling(_ room: RoomPresence) {
        guard !room.isListedForSettling else { return }
        room.isListedForSettling = true
        roomsWithPendingChanges.append(room)
    }

    /// Rooms listed to be settled at the next `settleAll` (for tests).
    var roomsListedForSettling: Int { roomsWithPendingChanges.count }

    /// Hands over what the store is to be told, and forgets it.
    func takeSettledForStore() -> [(room: String, member: RoomPresence.SettledMember)] {
        defer { settledForStore.removeAll(keepingCapacity: true) }
        return settledForStore
    }

    /// Ends the turn of every room that had lines.
    func endTurn() {
        for room in roomsWithTurnLines {
            room.endTurn()
            dropIfIdle(room)
        }
        roomsWithTurnLines.removeAll(keepingCapacity: true)
    }

    /// Replaces a room's members (a fleet's member list read again): those
    /// already listed keep their places, newcomers follow in the given order.
    /// Followers are sent a whole listing instead (`Server.relistPresence`).
    func replaceMembers(of name: String, with members: [Member]) {
        let room = room(named: name)
        let wanted = Dictionary(members.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        membersTotal -= room.count
        for member in room.members where wanted[member.id] == nil { room.remove(member.id) }
        for member in members { room.set(member) }
        membersTotal += room.count
        if room.hasPendingChanges { listForSettling(room) }
        dropIfIdle(room)
    }

    /// Every room held.
    var allRooms: [RoomPresence] { Array(byName.values) }

    /// Names of the rooms held.
    var names: [String] { Array(byName.keys) }
}
