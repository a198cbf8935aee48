import NavSyncCore
import NavSyncServer
import RedisClient

/// Presence across the fleet (BACKPLANE.md): this daemon's member
/// changes go to Redis once per loop turn (each room's members hash, and one
/// message on the presence channel with every change of the turn); other
/// daemons' messages reach the hub as members of theirs. Each daemon keeps a
/// key that expires unless its heartbeat renews it; the others check that
/// key every heartbeat and report a daemon's members gone once it expired.
/// After a connect (an outage, or a Redis that lost its data), the members
/// are read again and this daemon's own are written again.
///
/// A room's members hash and its entry in the set of rooms with
/// members change together, in the members function; what is read back
/// from Redis — the channel and the hashes — is checked line by line
/// (`PresenceMessage`, `PresenceBounds`) and counted when refused
/// (`presence_rejected`); at most `Settings.maxRemoteMembers` members of
/// other daemons are kept.
///
/// Its own type beside the rooms' tracks, which it never touches: the
/// store hands it the connection of the moment (the command link and the
/// epoch, nil while Redis is away, or the current `RedisAttempt`) with
/// each call, and it tells the hub of other daemons' members directly.
/// Must be used on the loop thread only.
final class FleetPresenceSync {
    weak var delegate: RoomStoreDelegate?
    private let keys: BackplaneKeys
    /// This daemon's tag, the part of each member id before its dot.
    private let daemonTag: String
    /// `--max-line`: a member of another daemon whose `AT` line would not fit is not taken.
    private let maxLineBytes: Int
    private let log: Logger
    /// The loop's clock, for the warnings at most once a second.
    private let now: () -> UInt64
    /// A reply that must take the connection down (the store's `refuse`).
    private let refuseConnection: (String) -> Void
    /// Members of this daemon and of the others.
    private var fleetPresence = FleetPresence()
    /// Presence read from Redis and not taken (`presence_rejected`).
    private var presenceRejections = PresenceRejections()
    /// While the members are read again: the channel's changes that
    /// arrived meanwhile, applied after the read.
    private var heldPresence: [(epoch: String, change: PresenceMessage)]?
    /// When lines too long to publish were last logged (at most once a second).
    private var lastLeftOutWarning: UInt64?

    init(keys: BackplaneKeys, daemonTag: String, maxLineBytes: Int, maxRemoteMembers: Int, log: Logger,
         now: @escaping () -> UInt64, refuseConnection: @escaping (String) -> Void) {
        self.keys = keys
        self.daemonTag = daemonTag
        self.maxLineBytes = maxLineBytes
        self.log = log
        self.now = now
        self.refuseConnection = refuseConnection
        fleetPresence.remoteLimit = maxRemoteMembers
    }

    /// A member of this daemon arrived, changed or left: told to the fleet at the end of the turn.
    func noteLocal(_ change: PresenceMessage) { fleetPresence.noteLocal(change) }

    /// For `presence_rejected`.
    var rejectedCount: UInt64 { presenceRejections.count }

    /// The connection is gone: a read of the members again ends with it
    /// (the reconnect reads them anyway).
    func connectionLost() { heldPresence = nil }

    /// Sends the turn's member changes: one call of the members function
    /// per room (its hash and its entry in the set of rooms with members),
    /// then the changes on the presence channel, in messages of at most
    /// 64 KiB. While Redis is away they are dropped: the whole list is
    /// written again on reconnecting.
    /// `commands` is nil while Redis is away.
    func flush(on commands: (any RedisLink)?, epoch: String?) {
        guard !fleetPresence.outbox.isEmpty else { return }
        let changes = fleetPresence.outbox
        fleetPresence.outbox.removeAll(keepingCapacity: true)
        guard let commands, let epoch else { return }
        writePresence(changes, epoch: epoch, on: commands)
    }

    private func writePresence(_ changes: [PresenceMessage], epoch: String, on commands: any RedisLink) {
        // Set first, so a daemon that hears of a member finds its daemon alive.
        commands.send(["SET", keys.daemon(daemonTag), "1", "PX", String(RedisRoomStore.daemonKeyMilliseconds)]) { _ in }
        var rooms: [String] = []
        var byRoom: [String: [PresenceMessage]] = [:]
        for change in changes {
            if byRoom[change.room] == nil { rooms.append(change.room) }
            byRoom[change.room, default: []].append(change)
        }
        for room in rooms {
            commands.send(MembersFunction.call(keys: keys, room: room, changes: byRoom[room] ?? [])) { _ in }
        }
        let (messages, leftOut) = changes.messages(epoch: epoch)
        if leftOut > 0, lastLeftOutWarning.map({ now() &- $0 >= 1_000 }) ?? true {
            lastLeftOutWarning = now()
            log.warn("backplane: \(leftOut) member line(s) over \(PresenceBounds.maxPublishedBytes) bytes not published "
                     + "(a route that long needs a --max-line near it); the members hashes hold them")
        }
        for payload in messages { commands.send(["PUBLISH", keys.presenceChannel, payload]) { _ in } }
    }

    /// What a member read from Redis must fit: this daemon's `--max-line` and `--max-depth`.
    var presenceBounds: PresenceBounds {
        PresenceBounds(maxLineBytes: maxLineBytes, maxDepth: delegate?.changeRules.maxDepth ?? Limits().maxDepth)
    }

    /// Counts presence read from Redis that was not taken, and says so (at most once a second).
    func rejectPresence(_ problem: PresenceMessage.Problem, from source: String, times: Int = 1) {
        guard times > 0 else { return }
        if let warning = presenceRejections.note(problem, from: source, now: now(), times: times) {
            log.warn(warning)
        }
    }

    /// A message of the presence channel: other daemons' changes, in the order they made them.
    func pushed(_ payload: [UInt8], epoch: String?) {
        let parsed = PresenceMessage.parse(payload, bounds: presenceBounds)
        for problem in parsed.rejected { rejectPresence(problem, from: "the presence channel") }
        // Changes that arrive while the members are read again wait for
        // that read, up to as many as members may be kept; a flood past
        // that is refused rather than held.
        if let held = heldPresence {
            let room = max(0, fleetPresence.remoteLimit - held.count)
            heldPresence?.append(contentsOf: parsed.changes.prefix(room))
            rejectPresence(.tooManyMembers(limit: fleetPresence.remoteLimit), from: "the presence channel",
                           times: parsed.changes.count - min(room, parsed.changes.count))
            return
        }
        applyRemote(parsed.changes, epoch: epoch)
    }

    private func applyRemote(_ changes: [(epoch: String, change: PresenceMessage)], epoch: String?) {
        guard let delegate else { return }
        for (published, change) in changes {
            // Our own come back too; another epoch's are from before Redis lost its data.
            guard published == epoch, PresenceMessage.daemonTag(of: change.id) != Substring(daemonTag) else { continue }
            switch fleetPresence.noteRemote(change) {
            case .known:
                continue
            case .turnedAway:
                rejectPresence(.tooManyMembers(limit: fleetPresence.remoteLimit), from: "the presence channel")
            case .changed:
                switch change {
                case .member(let room, let member): delegate.memberChangedElsewhere(member, in: room)
                case .gone(let room, let id): delegate.memberGoneElsewhere(id, from: room)
                }
            }
        }
    }

    // MARK: - Reading the fleet's members

    /// During the handshake, after the rooms: every room's members hash;
    /// members of daemons whose key has expired are dropped (and deleted).
    /// Then the store is up, this daemon's members are written again, and
    /// every follower gets a listing.
    /// `up` runs once they are adopted; the store is then up and calls `republishOwnMembers`.
    func readFleetMembers(_ attempt: RedisAttempt, then up: @escaping () -> Void) {
        readMembers(attempt) { [weak self] found in
            guard let self else { return }
            self.adoptFleetMembers(found)
            up()
        }
    }

    /// While up, once the members kept had reached the limit and are
    /// below it again: every members hash is read again (messages of the
    /// channel wait meanwhile), and every follower gets a listing.
    private func readMembersAgain(_ attempt: RedisAttempt, epoch: String?) {
        guard heldPresence == nil else { return }
        heldPresence = []
        readMembers(attempt) { [weak self] found in
            guard let self, attempt.isCurrent else { return }
            self.adoptFleetMembers(found)
            let held = self.heldPresence ?? []
            self.heldPresence = nil
            self.applyRemote(held, epoch: epoch)
            self.delegate?.relistPresence()
        }
    }

    /// Every room's members hash, checked line by line; members of daemons
    /// that are alive are handed to `then`. A dead daemon's members are
    /// deleted, and a room left with no members leaves the set of rooms
    /// with members (the members function).
    private func readMembers(_ attempt: RedisAttempt, then: @escaping ([String: FleetPresence.Entry]) -> Void) {
        attempt.ask(["SMEMBERS", keys.presenceRooms]) { [weak self] reply in
            guard let self else { return }
            guard let names = reply?.elements?.compactMap(\.text).filter(Names.isValid) else {
                if reply != nil {
                    self.refuseConnection("redis answered SMEMBERS \(self.keys.presenceRooms) with \(RedisRoomStore.describe(reply))")
                }
                return
            }
            var read = MembersRead()
            var waiting = names.count + 1
            let oneDone = {
                waiting -= 1
                if waiting == 0 { self.checkReadDaemons(read, attempt, then: then) }
            }
            for room in names.sorted() {
                attempt.ask(["HGETALL", self.keys.members(room)]) { reply in
                    guard let reply else { return }
                    self.readMembersHash(reply, of: room, into: &read)
                    oneDone()
                }
            }
            oneDone()
        }
    }

    /// What the members hashes held: the members that passed the checks,
    /// and every id that names a daemon (passed or not), by room, so a dead
    /// daemon's entries are deleted whatever they hold.
    private struct MembersRead {
        var found: [String: FleetPresence.Entry] = [:]
        var idsByRoom: [String: [String]] = [:]
        var emptyRooms: [String] = []
    }

    private func readMembersHash(_ reply: RedisReply, of room: String, into read: inout MembersRead) {
        guard let elements = reply.elements else {
            log.warn("backplane: the members of room \(room) cannot be read (\(keys.members(room)): \(RedisRoomStore.describe(reply)))")
            return
        }
        if elements.isEmpty { read.emptyRooms.append(room) }
        let source = "the members hash of room \(room)"
        for index in stride(from: 0, to: elements.count - 1, by: 2) {
            guard case .string(let idBytes) = elements[index], case .string(let value) = elements[index + 1] else {
                rejectPresence(.malformed, from: source)
                continue
            }
            let id = String(decoding: idBytes, as: UTF8.self)
            let tag = Member.isValidID(id) ? PresenceMessage.daemonTag(of: id) : nil
            if let tag, !tag.isEmpty { read.idsByRoom[room, default: []].append(id) }
            if tag == Substring(daemonTag) { continue }  // our own: written again from what we hold
            switch PresenceMessage.member(id: idBytes, value: value, bounds: presenceBounds) {
            case .success(let member): read.found[id] = FleetPresence.Entry(room: room, member: member)
            case .failure(let problem): rejectPresence(problem, from: source)
            }
        }
    }

    /// Keeps the members read whose daemon is alive and deletes the rest
    /// from Redis; rooms found empty are tidied out of the set.
    private func checkReadDaemons(_ read: MembersRead, _ attempt: RedisAttempt,
                                  then: @escaping ([String: FleetPresence.Entry]) -> Void) {
        let own = Substring(daemonTag)
        let daemons = Set(read.idsByRoom.values.joined().compactMap { PresenceMessage.daemonTag(of: $0) }
            .filter { $0 != own }.map(String.init))
        var alive = Set<String>()
        var waiting = daemons.count + 1
        let oneDone = {
            waiting -= 1
            guard waiting == 0 else { return }
            for room in read.emptyRooms {
                attempt.ask(MembersFunction.remove(keys: self.keys, room: room, ids: [])) { _ in }
            }
            for (room, ids) in read.idsByRoom.sorted(by: { $0.key < $1.key }) {
                let dead = ids.filter { id in
                    guard let tag = PresenceMessage.daemonTag(of: id), tag != own else { return false }
                    return !alive.contains(String(tag))
                }
                if !dead.isEmpty { attempt.ask(MembersFunction.remove(keys: self.keys, room: room, ids: dead)) { _ in } }
            }
            then(read.found.filter { id, _ in PresenceMessage.daemonTag(of: id).map { alive.contains(String($0)) } ?? false })
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

    /// The other daemons' members as read (at most the limit): each room
    /// the hub holds members for, or Redis does, is replaced by the fleet's list.
    private func adoptFleetMembers(_ found: [String: FleetPresence.Entry]) {
        guard let delegate else { return }
        let leftOut = fleetPresence.adopt(found)
        rejectPresence(.tooManyMembers(limit: fleetPresence.remoteLimit), from: "the members hashes", times: leftOut)
        // Grouped once: up to the limit of members in as many rooms, one pass.
        let byRoom = fleetPresence.membersByRoom()
        var rooms = Set(delegate.roomsWithMembers)
        rooms.formUnion(byRoom.keys)
        for room in rooms.sorted() { delegate.membersReplaced(in: room, with: byRoom[room] ?? []) }
    }

    /// After a connect: this daemon's members are written again whole (after
    /// an outage, or into a Redis that lost them), and every follower here
    /// is sent its room's listing.
    func republishOwnMembers(on commands: (any RedisLink)?, epoch: String?) {
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
    func renew(_ attempt: RedisAttempt, epoch: String?) {
        if fleetPresence.shouldReadAgain { readMembersAgain(attempt, epoch: epoch) }
        if !fleetPresence.local.isEmpty {
            attempt.ask(["SET", keys.daemon(daemonTag), "1", "PX", String(RedisRoomStore.daemonKeyMilliseconds)]) { _ in }
        }
        for tag in fleetPresence.remoteDaemons.sorted() where !fleetPresence.checking.contains(tag) {
            fleetPresence.checking.insert(tag)
            attempt.ask(["EXISTS", keys.daemon(tag)]) { [weak self] reply in
                guard let self else { return }
                self.fleetPresence.checking.remove(tag)
                guard let reply, reply.unsigned == 0 else { return }
                self.daemonGone(tag, on: attempt.commandLink)
            }
        }
    }

    /// Daemon `tag` stopped renewing its key: its members leave every room
    /// here, and its hash entries go (with a room's set entry, when they
    /// were its last).
    private func daemonGone(_ tag: String, on commands: (any RedisLink)?) {
        let gone = fleetPresence.dropDaemon(tag)
        guard !gone.isEmpty else { return }
        log.warn("backplane: daemon \(tag) stopped renewing its presence; its \(gone.count) member(s) are gone")
        var idsByRoom: [String: [String]] = [:]
        for entry in gone {
            delegate?.memberGoneElsewhere(entry.member.id, from: entry.room)
            idsByRoom[entry.room, default: []].append(entry.member.id)
        }
        for (room, ids) in idsByRoom.sorted(by: { $0.key < $1.key }) {
            commands?.send(MembersFunction.remove(keys: keys, room: room, ids: ids)) { _ in }
        }
    }
}
