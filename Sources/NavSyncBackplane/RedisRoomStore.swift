import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// The rooms of a fleet of daemons, kept in Redis (the backplane).
///
/// Each change is one call of the change function in Redis, which compares
/// revisions, stores, appends to the room's history and publishes. Every
/// daemon learns every change from the fleet's channel (pub/sub: one
/// subscription covers every room, and Redis delivers a connection's
/// messages in the order it published them, which is revision order per
/// room); a revision that skips ahead is a gap, filled from the room's
/// history stream, or answered with a `STATE` resync when the stream no
/// longer holds it. Reads are served from the daemon's view, which follows
/// the channel.
///
/// While Redis cannot be reached every command that needs room state is
/// refused (`unavailableReason`); the store reconnects with backoff, then
/// reads every room again and brings each watcher up to date, in order or
/// with a resync. A Redis that lost the fleet's data (restarted empty,
/// FLUSHALL) shows a new epoch: every room is resynced, no old event replayed.
///
/// Must be used on the loop thread only.
public final class RedisRoomStore: RoomStore {
    public struct Settings: Sendable {
        public var endpoint: RedisEndpoint
        public var keys: BackplaneKeys
        /// Entries kept in each room's history stream.
        public var historyLength: Int
        /// Bytes kept in each room's history stream (op, route and tag of each entry).
        public var historyBytes: Int = 1 << 20
        /// Take this daemon's catalog as the fleet's instead of refusing to start.
        public var replaceCatalog: Bool
        public var replyTimeoutMilliseconds: UInt64 = 5_000
        /// `--backplane-auth`: sent with `AUTH` on every connection, reconnects included.
        public var credentials: RedisCredentials?
        /// `--max-line`: a member of another daemon whose `AT` line
        /// would not fit is not taken.
        public var maxLineBytes: Int = Limits().maxLineBytes
        /// Members of other daemons kept at most: 10 × `--max-clients`.
        public var maxRemoteMembers: Int = 10 * Limits().maxClients

        public init(endpoint: RedisEndpoint, keys: BackplaneKeys, historyLength: Int, replaceCatalog: Bool) {
            self.endpoint = endpoint
            self.keys = keys
            self.historyLength = historyLength
            self.replaceCatalog = replaceCatalog
        }
    }

    /// Why the daemon must not start.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// How often the epoch is read while up: notices a FLUSHALL with no
    /// change going on, and a Redis that stopped answering.
    static let heartbeatMilliseconds: UInt64 = 1_000
    /// A change that meets other daemons' changes this many times in a row is refused.
    static let maxAttempts = 64

    public weak var delegate: RoomStoreDelegate? {
        didSet { presence.delegate = delegate }
    }
    let loop: EventLoop
    let settings: Settings
    var keys: BackplaneKeys { settings.keys }
    let log: Logger

    /// Makes one link to Redis: the two callbacks are its `onReady` and
    /// `onGone` (see `RedisConnection.init`). A test passes scripted links.
    typealias Connector = RedisAttempt.Connector

    /// The connection's state machine (connect, handshake, up, down,
    /// reconnect); set once in `init`.
    private(set) var connection: BackplaneConnection!
    /// The current try at Redis (nil between a loss and the next try).
    var attempt: RedisAttempt? { connection.attempt }
    /// Where change rounds and history reads are sent (see `RedisAttempt`).
    var commands: (any RedisLink)? { connection.commands }
    var isUp: Bool { connection.isUp }
    var downReason: String { connection.downReason }
    var epoch: String? { connection.epoch }
    var tracks: [String: RoomTrack] = [:]
    /// Rooms with changes waiting and no round in flight, started at the end of the turn.
    var roomsAwaitingRound: [String] = []
    /// The tag of the change that made each room's view (absent: none, rev 0).
    var viewTags: [String: String] = [:]
    /// This daemon's part of every tag it gives a change, random per start.
    let daemonTag: String
    var changeCount: UInt64 = 0
    /// Rooms whose keys in Redis cannot be read or decoded now, and why.
    /// Each is that room's problem alone: its changes are refused and its
    /// events dropped, while every other room carries on. A change to it
    /// reads its keys again, so a repaired room comes back by itself.
    var unreadableRooms: [String: String] = [:]
    /// Rooms whose keys are being read again (`recheck`), one read at a time.
    var recheckingRooms: Set<String> = []
    /// Members of this daemon and of the others, kept in step with the
    /// fleet (`FleetPresenceSync`); set once in `init`.
    private(set) var presence: FleetPresenceSync!

    var gapFills: UInt64 = 0
    /// Events read back from a room's history because a message was missed.
    var gapsFilled: UInt64 = 0
    var resyncedRooms: UInt64 = 0
    var retriedChanges: UInt64 = 0

    public convenience init(loop: EventLoop, settings: Settings, log: Logger) {
        self.init(loop: loop, settings: settings, log: log) { onReady, onGone in
            RedisConnection(loop: loop, endpoint: settings.endpoint,
                            replyTimeoutMilliseconds: settings.replyTimeoutMilliseconds,
                            credentials: settings.credentials, onReady: onReady, onGone: onGone)
        }
    }

    init(loop: EventLoop, settings: Settings, log: Logger, connector: @escaping Connector) {
        self.loop = loop
        self.settings = settings
        self.log = log
        var generator = SystemRandomNumberGenerator()
        daemonTag = String(generator.next() as UInt32, radix: 36)
        connection = BackplaneConnection(loop: loop, keys: settings.keys, endpoint: settings.endpoint,
                                         replaceCatalog: settings.replaceCatalog, log: log, connector: connector)
        connection.owner = self
        presence = FleetPresenceSync(keys: settings.keys, daemonTag: daemonTag, maxLineBytes: settings.maxLineBytes,
                                     maxRemoteMembers: settings.maxRemoteMembers, log: log,
                                     now: { [loop] in loop.nowMilliseconds },
                                     refuseConnection: { [weak self] why in self?.refuse(why) })
    }

    /// Connects, checks Redis and the fleet's catalog, reads every room, and
    /// calls `completion` with nil once the store is up — or with why the
    /// daemon must not start. Later outages are handled here, not reported.
    /// `rooms` are delivered to the delegate, which must be set first.
    public func start(completion: @escaping (StartError?) -> Void) {
        connection.start(completion: completion)
    }

    /// Closes both connections (before the loop shuts down: hiredis's
    /// handles must be closed by hiredis).
    public func close() { connection.close() }

    // MARK: - RoomStore

    public var unavailableReason: String? { isUp ? nil : downReason }

    /// A room set aside as unreadable is refused for reads too; each such
    /// refusal reads its keys again (one read at a time), so a room
    /// repaired in Redis answers again without waiting for a change.
    public func unavailableReason(forRoom room: String) -> String? {
        if let down = unavailableReason { return down }
        guard let why = unreadableRooms[room] else { return nil }
        recheck(room)
        return Self.unreadableMessage(room, why)
    }

    public var persistenceName: String { "redis" }

    var historyBounds: ChangeFunction.HistoryBounds {
        ChangeFunction.HistoryBounds(count: settings.historyLength, bytes: settings.historyBytes)
    }

    public var figures: [Figure] {
        [.word("backplane", isUp ? "up" : "down", help: "Whether Redis answers, as a word (see backplane_up)."),
         .gauge("backplane_up", isUp ? 1 : 0, help: "1 while Redis answers, 0 during an outage."),
         .counter("backplane_outages", connection.outages, help: "Times the connection to Redis was lost."),
         .counter("backplane_gap_fills", gapFills, help: "Reads of a room's history to fill a gap of missed messages."),
         .counter("backplane_gaps_filled", gapsFilled,
                  help: "Events read back from a room's history because a message was missed."),
         .counter("backplane_resynced_rooms", resyncedRooms, help: "Rooms whose state was replaced by a read from Redis."),
         .counter("backplane_retried_changes", retriedChanges,
                  help: "Changes judged again because another daemon changed the room first."),
         .gauge("backplane_rooms_unreadable", unreadableRooms.count,
                help: "Rooms refused now because their keys in Redis cannot be read."),
         .counter("presence_rejected", presence.rejectedCount,
                  help: "Presence lines, messages and members read from Redis and not taken (malformed, too large, over the member limit).")]
    }

    /// Starts the rounds of the rooms whose changes arrived this turn, so
    /// every change read in one loop turn (a client's pipelined burst) goes
    /// to Redis as one round instead of its first change alone and the rest
    /// a round later.
    public func endOfTurn() {
        // The turn's member changes leave as one message, like a round.
        presence.flush(on: isUp ? commands : nil, epoch: epoch)
        guard !roomsAwaitingRound.isEmpty else { return }
        let rooms = roomsAwaitingRound
        roomsAwaitingRound.removeAll(keepingCapacity: true)
        for room in rooms {
            tracks[room]?.roundAwaited = false
            startRound(room)
        }
    }

    public func submit(_ change: ChangeRequest) {
        enqueue(change, tries: 0)
    }

    /// Always: a room's changes go out in the order they were submitted
    /// (see "Changes" below); Redis applies a round's changes in that order
    /// or fails the rest of the round, which is retried, in the same order,
    /// at the head of the next round, and an `IF` that Redis must check first
    /// ends its round, so nothing behind it is sent before it is settled.
    public func mayPipeline(after change: ChangeRequest) -> Bool { true }

    // MARK: - Presence (FleetPresenceSync)

    /// A daemon whose key is not renewed for this long is taken for dead:
    /// with a heartbeat a second, its members are reported gone within about
    /// 11 s of its end (the contract asks for 15).
    static let daemonKeyMilliseconds: UInt64 = 10_000

    public var memberIDPrefix: String { daemonTag + "." }

    public func memberChanged(_ member: Member, in room: String) {
        presence.noteLocal(.member(room: room, member))
    }

    public func memberGone(_ id: String, from room: String) {
        presence.noteLocal(.gone(room: room, id: id))
    }

    /// Stores `catalog` as the fleet's (SIGHUP); every daemon, this one
    /// included, adopts it from the catalog channel.
    public func publishCatalog(_ catalog: Catalog, completion: @escaping (String?) -> Void) {
        guard isUp, let commands else {
            completion(downReason)
            return
        }
        let json = CatalogFile.encode(catalog)
        commands.send([Array("SET".utf8), Array(keys.catalog.utf8), json]) { _ in }
        commands.send(["PUBLISH", keys.catalogChannel, "changed"]) { reply in
            completion(reply?.unsigned == nil ? "redis did not take the catalog: \(Self.describe(reply))" : nil)
        }
    }
}
