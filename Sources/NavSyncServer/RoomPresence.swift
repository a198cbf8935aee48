import NavSyncCore

/// (1.2) Presence in one room: its members in the order they became members,
/// the connections that follow them (`PRESENCE`), and this turn's presence
/// lines. Room state that is not revisioned: nothing here is journaled, and
/// members of other daemons of a fleet sit beside local ones, told apart by
/// nobody.
///
/// The lines work as a room's events do: each `MEMBER`/`GONE` line is encoded
/// once into the turn's list, every follower owes the lines after its cursor,
/// and the flush hands them out as one shared buffer (FanOut+Presence).
/// Must be used on the loop thread only.
final class RoomPresence {
    let name: String

    /// Members by arrival; a departure leaves a hole that `compact` closes,
    /// so a crowd leaving is not quadratic.
    private var slots: [Member?] = []
    private var slotByID: [String: Int] = [:]
    private(set) var count = 0

    /// Sessions following this room's presence (a removal moves the last one into the gap).
    private(set) var followers: [Session] = []

    /// This turn's presence lines and the bytes before each.
    private(set) var turnLines: [[UInt8]] = []
    private var turnOffsets: [Int] = []
    private(set) var turnBytes = 0
    private var joinedTurn: [UInt8]?
    /// A follower's cursor is valid only for the turn it was taken in.
    private(set) var turn: UInt64 = 1

    init(name: String) { self.name = name }

    // MARK: - Members

    /// The members, in the order they became members.
    var members: [Member] { slots.compactMap { $0 } }

    func member(_ id: String) -> Member? { slotByID[id].flatMap { slots[$0] } }

    /// Adds the member at the end, or replaces it where it is.
    /// Returns false when nothing about it changed.
    @discardableResult
    func set(_ member: Member) -> Bool {
        if let slot = slotByID[member.id] {
            guard slots[slot] != member else { return false }
            slots[slot] = member
            return true
        }
        slotByID[member.id] = slots.count
        slots.append(member)
        count += 1
        return true
    }

    /// Returns false when it was not a member.
    @discardableResult
    func remove(_ id: String) -> Bool {
        guard let slot = slotByID.removeValue(forKey: id) else { return false }
        slots[slot] = nil
        count -= 1
        if slots.count > 32 && count < slots.count / 2 { compact() }
        return true
    }

    private func compact() {
        slots = slots.filter { $0 != nil }
        slotByID.removeAll(keepingCapacity: true)
        for (slot, member) in slots.enumerated() { slotByID[member!.id] = slot }
    }

    // MARK: - Followers

    func addFollower(_ session: Session) {
        session.presence.followerSlot = followers.count
        followers.append(session)
        session.presence.followed = self
        // Lines already made this turn are in the listing it is answered with.
        session.presence.turn = turn
        session.presence.cursor = turnLines.count
    }

    func removeFollower(_ session: Session) {
        let slot = session.presence.followerSlot
        session.presence.followed = nil
        session.presence.followerSlot = -1
        guard slot >= 0, slot < followers.count, followers[slot] === session else { return }
        let last = followers.removeLast()
        if slot < followers.count {
            followers[slot] = last
            last.presence.followerSlot = slot
        }
    }

    // MARK: - This turn's lines

    /// Appends a line; true when it is the turn's first (followers are then marked to take them).
    func appendTurnLine(_ line: [UInt8]) -> Bool {
        turnOffsets.append(turnBytes)
        turnLines.append(line)
        turnBytes += line.count
        joinedTurn = nil
        return turnLines.count == 1
    }

    /// The range of this turn's lines the session still owes.
    func owedLines(_ session: Session) -> Range<Int>? {
        let start = session.presence.turn == turn ? session.presence.cursor : 0
        return start < turnLines.count ? start..<turnLines.count : nil
    }

    func markTaken(_ session: Session) {
        session.presence.turn = turn
        session.presence.cursor = turnLines.count
    }

    /// Bytes of the lines in `range`.
    func bytes(in range: Range<Int>) -> Int {
        let end = range.upperBound == turnLines.count ? turnBytes : turnOffsets[range.upperBound]
        return end - turnOffsets[range.lowerBound]
    }

    /// The lines in `range` as one buffer; all of them is one buffer shared by every follower.
    func chunk(_ range: Range<Int>) -> [UInt8] {
        if range == 0..<turnLines.count {
            if let joinedTurn { return joinedTurn }
            let joined = turnLines.count == 1 ? turnLines[0] : Array(turnLines.joined())
            joinedTurn = joined
            return joined
        }
        return Array(turnLines[range].joined())
    }

    /// Forgets the turn's lines; every follower's cursor becomes stale ("owes none yet").
    func endTurn() {
        turnLines.removeAll(keepingCapacity: true)
        turnOffsets.removeAll(keepingCapacity: true)
        turnBytes = 0
        joinedTurn = nil
        turn &+= 1
    }

    /// Nothing worth keeping: no member, no follower, no line owed.
    var isIdle: Bool { count == 0 && followers.isEmpty && turnLines.isEmpty }
}
