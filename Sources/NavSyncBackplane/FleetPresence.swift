import NavSyncCore

/// What the store knows of presence across the fleet: this daemon's
/// members (to publish them, and to publish them again after an outage or
/// after Redis lost its data), the other daemons' members (to tell the hub
/// they are gone when their daemon's key expires), and this turn's changes
/// not yet sent.
struct FleetPresence {
    struct Entry: Equatable {
        var room: String
        var member: Member
    }

    /// This daemon's members, by id.
    var local: [String: Entry] = [:]
    /// Members of other daemons, by id.
    var remote: [String: Entry] = [:]
    /// This daemon's changes of the current turn, in order.
    var outbox: [PresenceMessage] = []
    /// The daemon keys being checked now (one check at a time per daemon).
    var checking: Set<String> = []
    /// At most this many members of other daemons are kept (10 ×
    /// `--max-clients`), so a flood of fake members costs a bounded table.
    var remoteLimit = Int.max
    /// Members were turned away at the limit since the members were
    /// last read: once below it again, they are read again.
    var turnedAway = false

    /// Records one of this daemon's changes and queues it for the turn's message.
    mutating func noteLocal(_ change: PresenceMessage) {
        switch change {
        case .member(let room, let member): local[member.id] = Entry(room: room, member: member)
        case .gone(let room, let id): if local[id]?.room == room { local[id] = nil }
        }
        outbox.append(change)
    }

    /// What a change of another daemon did to the table.
    enum Noted: Equatable {
        case changed
        case known
        /// A new member while `remoteLimit` are held: not kept.
        case turnedAway
    }

    /// Records another daemon's change.
    mutating func noteRemote(_ change: PresenceMessage) -> Noted {
        switch change {
        case .member(let room, let member):
            let entry = Entry(room: room, member: member)
            let held = remote[member.id]
            guard held != entry else { return .known }
            if held == nil && remote.count >= remoteLimit {
                turnedAway = true
                return .turnedAway
            }
            remote[member.id] = entry
            return .changed
        case .gone(let room, let id):
            guard remote[id]?.room == room else { return .known }
            remote[id] = nil
            return .changed
        }
    }

    /// Whether the members should be read again: some were turned away,
    /// and there is room for them now.
    var shouldReadAgain: Bool { turnedAway && remote.count < remoteLimit }

    /// The members as read from Redis, at most `remoteLimit` of them (the
    /// lowest ids, so every read keeps the same ones); how many were left out.
    mutating func adopt(_ found: [String: Entry]) -> Int {
        turnedAway = false
        guard found.count > remoteLimit else {
            remote = found
            return 0
        }
        turnedAway = true
        let kept = found.keys.sorted().prefix(remoteLimit)
        remote = Dictionary(uniqueKeysWithValues: kept.map { ($0, found[$0]!) })
        return found.count - remoteLimit
    }

    /// The daemons whose members are listed here, other than this one.
    var remoteDaemons: Set<String> {
        Set(remote.keys.compactMap { PresenceMessage.daemonTag(of: $0).map(String.init) })
    }

    /// Forgets every member of daemon `tag`; returns them.
    mutating func dropDaemon(_ tag: String) -> [Entry] {
        let gone = remote.filter { PresenceMessage.daemonTag(of: $0.key) == Substring(tag) }
        for id in gone.keys { remote[id] = nil }
        return gone.values.sorted { $0.member.id < $1.member.id }
    }

    /// Each room's members as the fleet holds them (the other daemons' and
    /// this one's, by id), in one pass over the table.
    func membersByRoom() -> [String: [Member]] {
        var byRoom: [String: [Member]] = [:]
        for entry in remote.values { byRoom[entry.room, default: []].append(entry.member) }
        for entry in local.values { byRoom[entry.room, default: []].append(entry.member) }
        return byRoom.mapValues { $0.sorted { $0.id < $1.id } }
    }
}
