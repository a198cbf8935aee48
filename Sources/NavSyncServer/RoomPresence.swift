import NavSyncCore

/// Presence in one room: its members in the order they became members,
/// the connections that follow them (`PRESENCE`), and this turn's presence
/// lines. Room state that is not revisioned: nothing here is journaled, and
/// members of other daemons of a fleet sit beside local ones, told apart by
/// nobody.
///
/// Changes are coalesced per loop turn: a member's arrivals, changes and
/// departures only note what the followers last heard of it
/// (`PendingChange`), and `settle` turns the notes into at most one line per
/// member (two, `GONE` then `MEMBER`, for one that left and came back, so
/// the followers' lists keep `WHO`'s order). A member flooding `AT` thus
/// costs its followers one line per turn, whatever it sends.
///
/// The settled lines work as a room's events do: each line is encoded once
/// into the turn's list, every follower owes the lines after its cursor, and
/// the flush hands the whole turn out as one shared buffer (FanOut+Presence).
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
    private var joinedTurn: SharedBytes?
    /// A follower's cursor is valid only for the turn it was taken in.
    private(set) var turn: UInt64 = 1

    /// What the followers last heard of each member changed since the last
    /// `settle`, and the order those members were first changed in.
    private var pending: [String: PendingChange] = [:]
    /// In `PresenceTable`'s list of rooms to settle; only the table sets it.
    var isListedForSettling = false
    private var pendingOrder: [String] = []

    /// A member changed since the followers last heard of it.
    struct PendingChange {
        /// The member as the followers know it; nil when they do not know it.
        var heard: Member?
        /// It left at least once since: if it is a member now, it is one at
        /// the end of the list.
        var left = false
        /// A member of this daemon's own, which the store is told about.
        var isLocal: Bool
    }

    /// What `settle` found for a member of this daemon: its state now, or
    /// nil once it has gone. The store is told these, one per member per turn.
    struct SettledMember {
        var id: String
        var now: Member?
    }

    init(name: String) { self.name = name }

    // MARK: - Members

    /// The members, in the order they became members.
    var members: [Member] { slots.compactMap { $0 } }

    func member(_ id: String) -> Member? { slotByID[id].flatMap { slots[$0] } }

    /// Adds the member at the end, or replaces it where it is.
    /// Returns false when nothing about it changed.
    @discardableResult
    func set(_ member: Member, isLocal: Bool = false) -> Bool {
        if let slot = slotByID[member.id] {
            guard let old = slots[slot], old != member else { return false }
            notePending(member.id, heard: old, isLocal: isLocal)
            slots[slot] = member
            return true
        }
        notePending(member.id, heard: nil, isLocal: isLocal)
        slotByID[member.id] = slots.count
        slots.append(member)
        count += 1
        return true
    }

    /// Returns false when it was not a member.
    @discardableResult
    func remove(_ id: String, isLocal: Bool = false) -> Bool {
        guard let slot = slotByID[id], let old = slots[slot] else { return false }
        notePending(id, heard: old, isLocal: isLocal)
        pending[id]?.left = true
        slotByID[id] = nil
        slots[slot] = nil
        count -= 1
        if slots.count > 32 && count < slots.count / 2 { compact() }
        return true
    }

    /// Keeps what the followers knew before the member's first change of the turn.
    private func notePending(_ id: String, heard: Member?, isLocal: Bool) {
        guard pending[id] == nil else { return }
        pending[id] = PendingChange(heard: heard, isLocal: isLocal)
        pendingOrder.append(id)
    }

    /// Whether members changed since the last `settle`.
    var hasPendingChanges: Bool { !pendingOrder.isEmpty }

    /// Turns the changes since the last `settle` into this turn's lines:
    /// first the `GONE` of every member that left (or left and came back),
    /// then the `MEMBER` line of every member changed in place, then those
    /// of the members that arrived (or came back), in their order in the
    /// list; a member that came and went unheard makes nothing. Returns
    /// what became of this daemon's own members, for the store.
    func settle() -> [SettledMember] {
        guard !pendingOrder.isEmpty else { return [] }
        var gone: [[UInt8]] = [], changed: [[UInt8]] = [], arrived: [(slot: Int, line: [UInt8])] = []
        var settled: [SettledMember] = []
        for id in pendingOrder {
            guard let change = pending[id] else { continue }
            let now = member(id)
            let isNewInList = now != nil && (change.heard == nil || change.left)
            if change.heard != nil && (now == nil || change.left) { gone.append(Wire.gone(id: id)) }
            if let now {
                if isNewInList {
                    arrived.append((slotByID[id]!, Wire.member(now)))
                } else if now != change.heard {
                    changed.append(Wire.member(now))
                }
            }
            let madeALine = now != change.heard || (change.left && now != nil)
            if change.isLocal && madeALine { settled.append(SettledMember(id: id, now: now)) }
        }
        pending.removeAll(keepingCapacity: true)
        pendingOrder.removeAll(keepingCapacity: true)
        // Lines nobody follows would only be dropped at the turn's end.
        guard !followers.isEmpty else { return settled }
        arrived.sort { $0.slot < $1.slot }
        for line in gone + changed + arrived.map(\.line) { appendTurnLine(line) }
        return settled
    }

    private func compact() {
        slots = slots.filter { $0 != nil }
        slotByID.removeAll(keepingCapacity: true)
        for (slot, member) in slots.enumerated() { slotByID[member!.id] = slot }
    }

    // MARK: - Followers

    /// Call `settle` first: the listing the new follower is answered with
    /// shows every change so far, and its lines start after them.
    func addFollower(_ session: Session) {
        session.presence.followerSlot = followers.count
        followers.append(session)
        session.presence.followed = self
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

    private func appendTurnLine(_ line: [UInt8]) {
        turnOffsets.append(turnBytes)
        turnLines.append(line)
        turnBytes += line.count
        joinedTurn = nil
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

    /// The lines in `range` as a buffer of their own (a follower that
    /// started following in the middle of the turn).
    func chunk(_ range: Range<Int>) -> [UInt8] { Array(turnLines[range].joined()) }

    /// Every line of the turn as one buffer, the same object for every
    /// follower that takes the whole turn; queued writes that hold it are
    /// charged to `ledger` once, as a room's events are.
    func allTurnLines(ledger: SharedBytesLedger) -> SharedBytes {
        if let joinedTurn { return joinedTurn }
        let joined = SharedBytes(joining: turnLines, ledger: ledger)
        joinedTurn = joined
        return joined
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
    var isIdle: Bool { count == 0 && followers.isEmpty && turnLines.isEmpty && pendingOrder.isEmpty }
}
