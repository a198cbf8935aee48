import NavSyncCore

/// (1.2) Every room's presence (`RoomPresence`) by name, the fleet-wide
/// member count, and which rooms made presence lines this turn.
///
/// Pure bookkeeping, like `RoomRegistry`: it sends nothing itself. A room's
/// presence is kept while it has a member, a follower or lines to hand out.
/// Must be used on the loop thread only.
final class PresenceTable {
    private var byName: [String: RoomPresence] = [:]
    /// Members of every room (of the fleet, with a backplane).
    private(set) var membersTotal = 0
    /// Rooms whose `turnLines` are not empty.
    private(set) var roomsWithTurnLines: [RoomPresence] = []
    /// Lines made while the fan-out flushes (a session that ends during the
    /// flush leaves its room then) wait here: they belong to the next turn,
    /// since followers later in that flush would otherwise take them and
    /// earlier ones lose them when the turn ends.
    private var lateLines: [(room: String, line: [UInt8])] = []
    var isFlushing = false

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

    /// Adds or changes a member. Returns the line to send when something changed.
    func set(_ member: Member, in name: String) -> [UInt8]? {
        let room = room(named: name)
        let wasMember = room.member(member.id) != nil
        guard room.set(member) else { return nil }
        if !wasMember { membersTotal += 1 }
        return Wire.member(member)
    }

    /// Removes a member. Returns the line to send when it was one.
    func remove(_ id: String, from name: String) -> [UInt8]? {
        guard let room = byName[name], room.remove(id) else { return nil }
        membersTotal -= 1
        dropIfIdle(room)
        return Wire.gone(id: id)
    }

    /// Queues `line` for the room's followers this turn, or for the next
    /// one during a flush. Returns the followers to mark for the flush when
    /// it is the room's first line of the turn.
    func append(_ line: [UInt8], to name: String) -> [Session] {
        if isFlushing {
            lateLines.append((name, line))
            return []
        }
        guard let room = byName[name], !room.followers.isEmpty else { return [] }
        guard room.appendTurnLine(line) else { return [] }
        roomsWithTurnLines.append(room)
        return room.followers
    }

    /// Ends the turn of every room that had lines, then starts the next one
    /// with the lines made during the flush. Returns the followers those
    /// reach, to be marked for another flush.
    func endTurn() -> [Session] {
        for room in roomsWithTurnLines {
            room.endTurn()
            dropIfIdle(room)
        }
        roomsWithTurnLines.removeAll(keepingCapacity: true)
        let late = lateLines
        lateLines.removeAll()
        return late.flatMap { append($0.line, to: $0.room) }
    }

    /// Replaces a room's members (a fleet's member list read again): those
    /// already listed keep their places, newcomers follow in the given order.
    func replaceMembers(of name: String, with members: [Member]) {
        let room = room(named: name)
        let wanted = Dictionary(members.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        membersTotal -= room.count
        for member in room.members where wanted[member.id] == nil { room.remove(member.id) }
        for member in members { room.set(member) }
        membersTotal += room.count
        dropIfIdle(room)
    }

    /// Every room held.
    var allRooms: [RoomPresence] { Array(byName.values) }

    /// Names of the rooms held.
    var names: [String] { Array(byName.keys) }
}
