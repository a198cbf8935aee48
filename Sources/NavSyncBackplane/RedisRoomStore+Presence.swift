import NavSyncCore
import NavSyncServer
import RedisClient

/// (1.2) Presence across the fleet (BACKPLANE.md): this daemon's member
/// changes go to Redis once per loop turn (each room's members hash, and one
/// message on the presence channel with every change of the turn); other
/// daemons' messages reach the hub as members of theirs. Each daemon keeps a
/// key that expires unless its heartbeat renews it; the others check that
/// key every heartbeat and report a daemon's members gone once it expired.
/// After a connect (an outage, or a Redis that lost its data), the members
/// are read again and this daemon's own are written again.
extension RedisRoomStore {
    /// A daemon whose key is not renewed for this long is taken for dead:
    /// with a heartbeat a second, its members are reported gone within about
    /// 11 s of its end (the contract asks for 15).
    static let daemonKeyMilliseconds: UInt64 = 10_000

    public var memberIDPrefix: String { daemonTag + "." }

    public func memberChanged(_ member: Member, in room: String) {
        fleetPresence.noteLocal(.member(room: room, member))
    }

    public func memberGone(_ id: String, from room: String) {
        fleetPresence.noteLocal(.gone(room: room, id: id))
    }

    /// Sends the turn's member changes: the hashes, then one message. While
    /// Redis is away they are dropped: the whole list is written again on reconnecting.
    func flushPresence() {
        guard !fleetPresence.outbox.isEmpty else { return }
        let changes = fleetPresence.outbox
        fleetPresence.outbox.removeAll(keepingCapacity: true)
        guard isUp, let commands, let epoch else { return }
        writePresence(changes, epoch: epoch, on: commands)
    }

    private func writePresence(_ changes: [PresenceMessage], epoch: String, on commands: any RedisLink) {
        // Set first, so a daemon that hears of a member finds its daemon alive.
        commands.send(["SET", keys.daemon(daemonTag), "1", "PX", String(Self.daemonKeyMilliseconds)]) { _ in }
        var rooms = Set<String>()
        for change in changes {
            switch change {
            case .member(let room, let member):
                rooms.insert(room)
                commands.send(["HSET", keys.members(room), member.id, PresenceMessage.hashValue(member)]) { _ in }
            case .gone(let room, let id):
                commands.send(["HDEL", keys.members(room), id]) { _ in }
            }
        }
        if !rooms.isEmpty { commands.send(["SADD", keys.presenceRooms] + rooms.sorted()) { _ in } }
        let payload = changes.map { $0.line(epoch: epoch) }.joined(separator: "\n")
        commands.send(["PUBLISH", keys.presenceChannel, payload]) { _ in }
    }

    /// A message of the presence channel: other daemons' changes, in the order they made them.
    func presencePushed(_ payload: [UInt8]) {
        guard let delegate else { return }
        for (published, change) in PresenceMessage.parse(payload) {
            // Our own come back too; another epoch's are from before Redis lost its data.
            guard published == epoch, PresenceMessage.daemonTag(of: change.id) != Substring(daemonTag) else { continue }
            guard fleetPresence.noteRemote(change) else { continue }
            switch change {
            case .member(let room, let member): delegate.memberChangedElsewhere(member, in: room)
            case .gone(let room, let id): delegate.memberGoneElsewhere(id, from: room)
            }
        }
    }

    // MARK: - Reading the fleet's members

    /// During the handshake, after the rooms: every room's members hash;
    /// members of daemons whose key has expired are dropped (and deleted).
    /// Then the store is up, this daemon's members are written again, and
    /// every follower gets a listing.
    func readFleetMembers(_ attempt: RedisAttempt) {
        attempt.ask(["SMEMBERS", keys.presenceRooms]) { [weak self] reply in
            guard let self else { return }
            guard let names = reply?.elements?.compactMap(\.text).filter(Names.isValid) else {
                if reply != nil { self.refuse("redis answered SMEMBERS \(self.keys.presenceRooms) with \(Self.describe(reply))") }
                return
            }
            var found: [String: FleetPresence.Entry] = [:]
            var waiting = names.count + 1
            let oneDone = {
                waiting -= 1
                if waiting == 0 { self.checkReadDaemons(found, attempt) }
            }
            for room in names.sorted() {
                attempt.ask(["HGETALL", self.keys.members(room)]) { reply in
                    guard let reply else { return }
                    let fields = reply.elements?.compactMap(\.text) ?? []
                    for index in stride(from: 0, to: fields.count - 1, by: 2) {
                        let id = fields[index]
                        guard PresenceMessage.daemonTag(of: id).map({ $0 != Substring(self.daemonTag) }) ?? false,
                              let member = PresenceMessage.member(id: id, fields: fields[index + 1]) else { continue }
                        found[id] = FleetPresence.Entry(room: room, member: member)
                    }
                    oneDone()
                }
            }
            oneDone()
        }
    }

    /// Keeps the members read whose daemon is alive, then the store is up.
    private func checkReadDaemons(_ found: [String: FleetPresence.Entry], _ attempt: RedisAttempt) {
        let daemons = Set(found.keys.compactMap { PresenceMessage.daemonTag(of: $0).map(String.init) })
        var alive = Set<String>()
        var waiting = daemons.count + 1
        let oneDone = {
            waiting -= 1
            guard waiting == 0 else { return }
            var kept: [String: FleetPresence.Entry] = [:]
            for (id, entry) in found {
                guard let tag = PresenceMessage.daemonTag(of: id), alive.contains(String(tag)) else {
                    attempt.ask(["HDEL", self.keys.members(entry.room), id]) { _ in }
                    continue
                }
                kept[id] = entry
            }
            self.adoptFleetMembers(kept)
            self.becomeUp(attempt)
            self.republishOwnMembers()
        }
        for tag in daemons.sorted() {
            attempt.ask(["EXISTS", keys.daemon(tag)]) { reply in
                guard let reply else { return }
                if (reply.unsigned ?? 0) != 0 { alive.insert(tag) }
                oneDone()
            }
        }
        oneDone()
    }

    /// The other daemons' members as read: each room the hub holds members
    /// for, or Redis does, is replaced by the fleet's list.
    private func adoptFleetMembers(_ found: [String: FleetPresence.Entry]) {
        guard let delegate else { return }
        fleetPresence.remote = found
        var rooms = Set(delegate.roomsWithMembers)
        rooms.formUnion(found.values.map(\.room))
        rooms.formUnion(fleetPresence.local.values.map(\.room))
        for room in rooms.sorted() { delegate.membersReplaced(in: room, with: fleetPresence.members(of: room)) }
    }

    /// After a connect: this daemon's members are written again whole (after
    /// an outage, or into a Redis that lost them), and every follower here
    /// is sent its room's listing.
    private func republishOwnMembers() {
        fleetPresence.outbox.removeAll()
        let own = fleetPresence.local.values.sorted { $0.member.id < $1.member.id }
        if let commands, let epoch, !own.isEmpty {
            writePresence(own.map { .member(room: $0.room, $0.member) }, epoch: epoch, on: commands)
        }
        delegate?.relistPresence()
    }

    // MARK: - The heartbeat

    /// Every heartbeat: this daemon's key renewed while it has members, and
    /// each other daemon with members here checked; an expired one's members are gone.
    func renewPresence(_ attempt: RedisAttempt) {
        if !fleetPresence.local.isEmpty {
            attempt.ask(["SET", keys.daemon(daemonTag), "1", "PX", String(Self.daemonKeyMilliseconds)]) { _ in }
        }
        for tag in fleetPresence.remoteDaemons.sorted() where !fleetPresence.checking.contains(tag) {
            fleetPresence.checking.insert(tag)
            attempt.ask(["EXISTS", keys.daemon(tag)]) { [weak self] reply in
                guard let self else { return }
                self.fleetPresence.checking.remove(tag)
                guard let reply, reply.unsigned == 0 else { return }
                self.daemonGone(tag)
            }
        }
    }

    /// Daemon `tag` stopped renewing its key: its members leave every room here, and its hash entries go.
    func daemonGone(_ tag: String) {
        let gone = fleetPresence.dropDaemon(tag)
        guard !gone.isEmpty else { return }
        log.warn("backplane: daemon \(tag) stopped renewing its presence; its \(gone.count) member(s) are gone")
        for entry in gone {
            delegate?.memberGoneElsewhere(entry.member.id, from: entry.room)
            commands?.send(["HDEL", keys.members(entry.room), entry.member.id]) { _ in }
        }
    }
}
