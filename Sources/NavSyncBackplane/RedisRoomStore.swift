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

    public weak var delegate: RoomStoreDelegate?
    private let loop: EventLoop
    private let settings: Settings
    private var keys: BackplaneKeys { settings.keys }
    private let log: Logger

    /// Makes one link to Redis: the two callbacks are its `onReady` and
    /// `onGone` (see `RedisConnection.init`). A test passes scripted links.
    typealias Connector = (_ onReady: @escaping () -> Void, _ onGone: @escaping (String) -> Void) -> any RedisLink
    private let makeLink: Connector

    private var commands: (any RedisLink)?
    private var subscriber: (any RedisLink)?
    /// Counts connection attempts; callbacks of an older attempt are ignored.
    private var generation = 0
    private var isUp = false
    private var downReason: String
    private var epoch: String?
    private var tracks: [String: RoomTrack] = [:]
    private var retryTimer: LoopTimer?
    private var heartbeat: LoopTimer?
    private var backoff = ReconnectBackoff()
    private var outageStartedAt: UInt64?
    private var startCompletion: ((StartError?) -> Void)?
    private var closed = false
    /// Pushes that arrived while rooms were still being read after a connect.
    private var heldPushes: [[UInt8]]? = nil
    /// Rooms with changes waiting and no round in flight, started at the end of the turn.
    private var roomsAwaitingRound: [String] = []
    /// The tag of the change that made each room's view (absent: none, rev 0).
    private var viewTags: [String: String] = [:]
    /// This daemon's part of every tag it gives a change, random per start.
    private let daemonTag: String
    private var changeCount: UInt64 = 0
    /// Rooms whose keys in Redis cannot be read or decoded now, and why.
    /// Each is that room's problem alone: its changes are refused and its
    /// events dropped, while every other room carries on. A change to it
    /// reads its keys again, so a repaired room comes back by itself.
    private var unreadableRooms: [String: String] = [:]
    /// Rooms whose keys are being read again (`recheck`), one read at a time.
    private var recheckingRooms: Set<String> = []

    private(set) var outages: UInt64 = 0
    private(set) var gapFills: UInt64 = 0
    /// Events read back from a room's history because a message was missed.
    private(set) var gapsFilled: UInt64 = 0
    private(set) var resyncedRooms: UInt64 = 0
    private(set) var retriedChanges: UInt64 = 0

    public convenience init(loop: EventLoop, settings: Settings, log: Logger) {
        self.init(loop: loop, settings: settings, log: log) { onReady, onGone in
            RedisConnection(loop: loop, endpoint: settings.endpoint,
                            replyTimeoutMilliseconds: settings.replyTimeoutMilliseconds,
                            onReady: onReady, onGone: onGone)
        }
    }

    init(loop: EventLoop, settings: Settings, log: Logger, connector: @escaping Connector) {
        self.makeLink = connector
        self.loop = loop
        self.settings = settings
        self.log = log
        downReason = "connecting to redis at \(settings.endpoint)"
        var generator = SystemRandomNumberGenerator()
        daemonTag = String(generator.next() as UInt32, radix: 36)
    }

    /// Connects, checks Redis and the fleet's catalog, reads every room, and
    /// calls `completion` with nil once the store is up — or with why the
    /// daemon must not start. Later outages are handled here, not reported.
    /// `rooms` are delivered to the delegate, which must be set first.
    public func start(completion: @escaping (StartError?) -> Void) {
        startCompletion = completion
        connect()
    }

    /// Closes both connections (before the loop shuts down: hiredis's
    /// handles must be closed by hiredis).
    public func close() {
        closed = true
        retryTimer?.close()
        heartbeat?.close()
        commands?.close()
        subscriber?.close()
        commands = nil
        subscriber = nil
    }

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

    private var historyBounds: ChangeFunction.HistoryBounds {
        ChangeFunction.HistoryBounds(count: settings.historyLength, bytes: settings.historyBytes)
    }

    public var figures: [Figure] {
        [.word("backplane", isUp ? "up" : "down", help: "Whether Redis answers, as a word (see backplane_up)."),
         .gauge("backplane_up", isUp ? 1 : 0, help: "1 while Redis answers, 0 during an outage."),
         .counter("backplane_outages", outages, help: "Times the connection to Redis was lost."),
         .counter("backplane_gap_fills", gapFills, help: "Reads of a room's history to fill a gap of missed messages."),
         .counter("backplane_gaps_filled", gapsFilled,
                  help: "Events read back from a room's history because a message was missed."),
         .counter("backplane_resynced_rooms", resyncedRooms, help: "Rooms whose state was replaced by a read from Redis."),
         .counter("backplane_retried_changes", retriedChanges,
                  help: "Changes judged again because another daemon changed the room first."),
         .gauge("backplane_rooms_unreadable", unreadableRooms.count,
                help: "Rooms refused now because their keys in Redis cannot be read.")]
    }

    /// Starts the rounds of the rooms whose changes arrived this turn, so
    /// every change read in one loop turn (a client's pipelined burst) goes
    /// to Redis as one round instead of its first change alone and the rest
    /// a round later.
    public func endOfTurn() {
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

    // MARK: - Changes
    //
    // Each room's changes go to Redis in rounds: while a round is in flight,
    // new changes wait in the room's queue; when its last answer is in, the
    // queue is sent as the next round, each change judged against the state
    // the one before it will make (so a round is one write and, with
    // `appendfsync always`, one fsync in Redis). A change that finds the
    // room moved (another daemon got in first) fails the rest of its round
    // with it; they are judged again, in order, in the next round, against
    // what Redis said it holds. The gap between rounds is also what lets
    // another daemon's round in: daemons racing on one room take turns.

    private func viewState(_ room: String) -> RoomState {
        guard let delegate else { return RoomState(stack: [], revision: 0) }
        return delegate.storedState(of: room) ?? delegate.changeRules.initialState
    }

    private func track(_ room: String) -> RoomTrack {
        if let track = tracks[room] { return track }
        let track = RoomTrack()
        tracks[room] = track
        return track
    }

    /// A tag no other change of the fleet carries: this daemon's random
    /// name and a count.
    private func nextTag() -> String {
        changeCount += 1
        return daemonTag + "." + String(changeCount, radix: 36)
    }

    /// Queues a change for its room's next round; with no round in flight,
    /// that round starts at the end of this loop turn (`endOfTurn`).
    private func enqueue(_ change: ChangeRequest, tries: Int) {
        let track = track(change.room)
        track.waiting.append((change, tries))
        if track.inFlight == 0 && !track.roundAwaited {
            track.roundAwaited = true
            roomsAwaitingRound.append(change.room)
        }
    }

    /// The newest state of the room this daemon knows to be real, and the
    /// tag of the change that made it: the view, or what Redis last answered.
    private func knownState(_ room: String) -> (RoomState, String) {
        let view = viewState(room)
        if let track = tracks[room], let known = track.known, known.state.revision >= view.revision {
            return (known.state, known.tag)
        }
        return (view, viewTags[room] ?? "")
    }

    /// Sends the room's queue as one round. An `IF` that Redis must check
    /// first ends the round (the rest waits for the next one).
    private func startRound(_ room: String) {
        guard let delegate, let track = tracks[room], track.inFlight == 0 else { return }
        guard isUp, commands != nil, epoch != nil else {
            let refused = track.waiting
            track.waiting.removeAll()
            for (change, _) in refused { delegate.changeFinished(change, .refused(ProtocolError(.unavailable, downReason))) }
            return
        }
        if unreadableRooms[room] != nil {
            // Its keys are read again first: a repaired room takes the
            // change, a broken one refuses it (`recheckDone`).
            recheck(room)
            return
        }
        let rules = delegate.changeRules
        var (base, tag) = knownState(room)
        if base.revision == 0 {
            // A round that may give the room its first state: the fleet's room set decides first.
            switch track.admission {
            case .unknown:
                admit(room, track)
                return
            case .asking:
                return
            case .failed(let reason):
                track.admission = .unknown
                let refused = track.waiting
                track.waiting.removeAll()
                for (change, _) in refused { delegate.changeFinished(change, .refused(ProtocolError(.unavailable, reason))) }
                return
            case .admitted, .full:
                break
            }
        }
        let full = base.revision == 0 && track.admission == .full
        if full { track.admission = .unknown }
        // The changes judged so far go as one call, after the state `from`;
        // a confirmation Redis must give in between sends them first, so
        // Redis sees everything in the order it was submitted.
        var from = ChangeFunction.Precondition(revision: base.revision, tag: tag)
        var round: [RoundChange] = []
        while !track.waiting.isEmpty {
            let (change, tries) = track.waiting.removeFirst()
            guard tries < Self.maxAttempts else {
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "the room kept changing under this request; try again")))
                continue
            }
            // IF against a revision the round does not start from: only Redis can tell.
            if let expected = change.ifRevision, expected != base.revision {
                send(round, of: room, after: from)
                confirm(change, expecting: .exactly(expected), tries: tries)
                return
            }
            let precondition = ChangeFunction.Precondition(revision: base.revision, tag: tag)
            let outcome = rules.evaluate(change.mutation, ifRevision: change.ifRevision, against: base)
            guard case .applied(let changed) = outcome else {
                send(round, of: room, after: from)
                round = []
                from = precondition
                confirm(change, expecting: precondition, tries: tries) { outcome }
                continue
            }
            if full && base.revision == 0 {
                delegate.changeFinished(change, .refused(rules.roomLimitError))
                continue
            }
            guard changed.revision <= StoredRevision.largest else {
                // The one revision past it is the largest 64-bit value, which
                // Redis may not hold (every daemon would take the room as unreadable).
                delegate.changeFinished(change, .refused(ProtocolError(.limit,
                    "the room's revision is at its maximum (\(base.revision)); it cannot change any more")))
                continue
            }
            let newTag = nextTag()
            round.append(RoundChange(change: change, changed: changed, tag: newTag, tries: tries))
            (base, tag) = (changed, newTag)
        }
        send(round, of: room, after: from)
    }

    /// One change of a round: the state it makes and the tag it gives it.
    private struct RoundChange {
        var change: ChangeRequest
        var changed: RoomState
        var tag: String
        var tries: Int
        /// The revision it is judged against.
        var expected: UInt64 { changed.revision - 1 }
    }

    /// Sends `round` to Redis as one call of the change function, judged
    /// from `precondition` on.
    private func send(_ round: [RoundChange], of room: String, after precondition: ChangeFunction.Precondition) {
        guard !round.isEmpty, let delegate else { return }
        let steps = round.map { ChangeFunction.Step(route: $0.changed.route, op: $0.change.mutation.op, tag: $0.tag) }
        guard let commands, let epoch,
              commands.send(ChangeFunction.call(keys: keys, epoch: epoch, room: room, expected: precondition,
                                                steps: steps, history: historyBounds),
                            then: { [weak self] reply in self?.answered(round, of: room, reply: reply) }) else {
            for item in round { delegate.changeFinished(item.change, .refused(ProtocolError(.unavailable, downReason))) }
            return
        }
        let track = track(room)
        track.inFlight += round.count
        track.expectedInFlight += round.map(\.expected)
    }

    /// Asks the fleet's room set to count the room (`--max-rooms` across the
    /// fleet); the room's queue waits for the answer.
    private func admit(_ room: String, _ track: RoomTrack) {
        guard let delegate, let commands else { return }
        track.admission = .asking
        let call = ChangeFunction.admitCall(keys: keys, room: room, maxRooms: delegate.changeRules.maxRooms)
        let sent = commands.send(call) { [weak self, weak track] reply in
            guard let self, let track else { return }
            switch reply?.text {
            case "known", "added": track.admission = .admitted
            case "full": track.admission = .full
            case nil where reply == nil:
                // The connection is gone: the queue is refused as unavailable, and asked again once back.
                track.admission = .unknown
            default:
                let why = "redis refused to count the room: \(Self.describe(reply))"
                self.log.error("backplane: \(why)")
                track.admission = .failed(why)
            }
            self.roundStepDone(room)
        }
        if sent {
            track.inFlight += 1
        } else {
            track.admission = .failed(downReason)
            startRound(room)
        }
    }

    /// One answer of a round is in; the last one starts the next round.
    private func roundStepDone(_ room: String) {
        guard let track = tracks[room] else { return }
        track.inFlight -= 1
        if track.inFlight == 0 {
            track.waiting.insert(contentsOf: track.retrying, at: 0)
            track.retrying.removeAll()
            if !track.waiting.isEmpty { startRound(room) }
        }
    }

    /// Redis's answer to a round: every change applied, or none (the room
    /// had moved: each is judged again in the next round).
    private func answered(_ round: [RoundChange], of room: String, reply: RedisReply?) {
        let answer = ChangeFunction.Answer(reply)
        if case .applied(let revision) = answer, let last = round.last, revision != last.changed.revision {
            // Out of step with what was sent: the connection is started
            // over, and the round is answered as one cut off with it.
            fault("redis applied revision \(revision) where \(last.changed.revision) was sent")
            for item in round { answered(item, nil, reply: nil) }
            return
        }
        for item in round {
            if case .applied = answer {
                answered(item, .applied(revision: item.changed.revision), reply: reply)
            } else {
                answered(item, answer, reply: reply)
            }
        }
    }

    private func answered(_ item: RoundChange, _ answer: ChangeFunction.Answer?, reply: RedisReply?) {
        guard let delegate else { return }
        let (change, changed, tag, tries) = (item.change, item.changed, item.tag, item.tries)
        let room = change.room
        let track = track(room)
        track.removeInFlight(item.expected)
        defer {
            roundStepDone(room)
            releaseParked(room)
        }
        switch answer {
        case .applied(let revision):
            // The next round starts from here, even before the event arrives.
            learned(room, changed, tag: tag)
            let view = viewState(room).revision
            if view + 1 == revision {
                viewTags[room] = tag
                delegate.changeFinished(change, .applied(changed))
            } else if view >= revision {
                // Already reached through a resync: only the reply is owed.
                delegate.changeFinished(change, .applied(changed))
            } else {
                // Earlier events are still on their way: answer when ours arrives.
                track.acknowledged[revision] = change
            }
        case .state(let revision, let route, let madeBy, _):
            retriedChanges += 1
            guard let current = state(revision: revision, route: route, room: room, refusing: change) else { return }
            learned(room, current, tag: madeBy)
            if let expected = change.ifRevision, expected != current.revision {
                // Redis's own current revision, just read: the IF is decided.
                delegate.changeFinished(change, .refused(ProtocolError(.conflict, "current=\(current.revision)")))
            } else {
                track.retrying.append((change, tries + 1))
            }
        case nil:
            if reply == nil {
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "lost the connection to redis; the change may or may not have been applied")))
            } else {
                log.error("backplane: unexpected answer to a change of room \(room): \(Self.describe(reply))")
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "redis refused the change: \(Self.describe(reply))")))
                // A key of the wrong type or a revision that is not one: the
                // room's own keys tell whether the room is the problem.
                recheck(room)
            }
        }
    }

    /// Remembers the newest state Redis reported for a room, for the next round.
    private func learned(_ room: String, _ state: RoomState, tag: String) {
        let track = track(room)
        if state.revision >= (track.known?.state.revision ?? 0) { track.known = (state, tag) }
    }

    /// Asks Redis whether the room is still as `expected`: if so, the
    /// outcome stands (`decided`), or the change is judged against it in
    /// the next round; if not, it is judged again there.
    private func confirm(_ change: ChangeRequest, expecting expected: ChangeFunction.Precondition, tries: Int,
                         decided: (() -> ChangeOutcome)? = nil) {
        guard let delegate, let commands, let epoch else { return }
        let room = change.room
        let call = ChangeFunction.call(keys: keys, epoch: epoch, room: room, expected: expected, steps: [],
                                       history: historyBounds)
        let sent = commands.send(call) { [weak self] reply in
            guard let self, let delegate = self.delegate else { return }
            defer {
                self.roundStepDone(room)
                self.releaseParked(room)
            }
            switch ChangeFunction.Answer(reply) {
            case .state(let current, let route, let madeBy, let matched):
                guard let state = self.state(revision: current, route: route, room: room, refusing: change) else { return }
                self.learned(room, state, tag: madeBy)
                if matched, let decided {
                    delegate.changeFinished(change, decided())
                } else if change.ifRevision != nil && change.ifRevision != current {
                    delegate.changeFinished(change, .refused(ProtocolError(.conflict, "current=\(current)")))
                } else {
                    self.track(room).retrying.append((change, tries + 1))
                }
            default:
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable,
                    reply == nil ? "lost the connection to redis" : "redis refused the request: \(Self.describe(reply))")))
            }
        }
        if sent {
            track(room).inFlight += 1
        } else {
            delegate.changeFinished(change, .refused(ProtocolError(.unavailable, downReason)))
        }
    }

    /// `state(revision:route:room:)` for the answer to `change`, which is
    /// refused when the route does not decode.
    private func state(revision: UInt64, route: String, room: String, refusing change: ChangeRequest) -> RoomState? {
        if let state = state(revision: revision, route: route, room: room) { return state }
        delegate?.changeFinished(change, .refused(ProtocolError(.unavailable,
            Self.unreadableMessage(room, unreadableRooms[room] ?? "its keys do not decode"))))
        return nil
    }

    /// A room state from Redis's rev and route. A route that does not decode
    /// is a fault of that room's data alone: the room is set aside as
    /// unreadable (logged, refused) and every other room carries on.
    private func state(revision: UInt64, route: String, room: String) -> RoomState? {
        if let state = decodedState(revision: revision, route: route) { return state }
        roomUnreadable(room, because: "its stored route at revision \(revision) does not decode: \"\(route.prefix(80))\"")
        return nil
    }

    /// The state Redis's rev and route stand for, or nil when the route does not decode.
    private func decodedState(revision: UInt64, route: String) -> RoomState? {
        guard let delegate else { return nil }
        if revision == 0 { return delegate.changeRules.initialState }
        guard case .success(let navigation) = Route.decode(route), !navigation.stack.isEmpty else { return nil }
        // The route carries the sheets too: the store needs no change for them.
        return RoomState(navigation, revision: revision)
    }

    static func unreadableMessage(_ room: String, _ why: String) -> String {
        "room \(room) cannot be read from redis (\(why)); it stays so until its keys are repaired"
    }

    // MARK: - Events from the fleet

    private func pushed(_ reply: RedisReply) {
        guard let parts = reply.elements, parts.count == 3, parts[0].text == "message",
              let channel = parts[1].text, case .string(let payload) = parts[2] else { return }
        if heldPushes != nil {
            heldPushes?.append(contentsOf: [Array(channel.utf8) + [0]] + [payload])
            return
        }
        deliverPush(channel: channel, payload: payload)
    }

    private func deliverPush(channel: String, payload: [UInt8]) {
        if channel == keys.catalogChannel {
            fetchCatalog()
            return
        }
        guard let (publishedEpoch, change) = PublishedChange.parse(payload) else {
            log.warn("backplane: ignored a malformed message on \(channel): \(String(decoding: payload.prefix(80), as: UTF8.self))")
            return
        }
        guard publishedEpoch == epoch else {
            fault("a change was published under another epoch: redis lost or replaced the fleet's data")
            return
        }
        received(change)
    }

    /// One published change, in channel order.
    private func received(_ change: PublishedChange) {
        let track = track(change.room)
        if !track.parked.isEmpty || track.filling || track.mayBeOwn(change) {
            track.parked.append(change)
            return
        }
        apply(change)
    }

    /// Moves the hub's view by one published change, or starts filling a gap.
    private func apply(_ change: PublishedChange) {
        guard let delegate else { return }
        guard unreadableRooms[change.room] == nil else {
            // Another daemon changed it, so its keys may read again now.
            recheck(change.room)
            return
        }
        let view = viewState(change.room).revision
        guard change.revision > view else { return }  // already known (our own, or read from the history)
        let track = track(change.room)
        guard change.revision == view + 1 else {
            track.parked.insert(change, at: 0)
            fillGap(change.room)
            return
        }
        guard let state = state(revision: change.revision, route: change.route, room: change.room) else { return }
        viewTags[change.room] = change.tag
        if let own = track.acknowledged.removeValue(forKey: change.revision) {
            delegate.changeFinished(own, .applied(state))
        } else {
            delegate.roomChanged(change.room, to: state, op: change.op)
        }
    }

    /// Delivers parked events that can no longer be our own change's.
    private func releaseParked(_ room: String) {
        guard let track = tracks[room] else { return }
        while !track.filling, let first = track.parked.first, !track.mayBeOwn(first) {
            track.parked.removeFirst()
            apply(first)
        }
        if track.isIdle { tracks[room] = nil }
    }

    /// Reads the room's history after the view's revision; events it holds
    /// in order are applied, a history that starts too late means a resync.
    private func fillGap(_ room: String, then: (() -> Void)? = nil) {
        let track = track(room)
        guard !track.filling, let commands else { return }
        track.filling = true
        gapFills += 1
        let from = viewState(room).revision + 1
        commands.send(RoomHistory.command(keys, room: room, from: from)) { [weak self] reply in
            guard let self else { return }
            track.filling = false
            guard let entries = reply?.elements else {
                // No reply: the connection is gone, and the reconnect reads every room again.
                guard reply != nil else { return }
                self.log.error("backplane: history of room \(room) unreadable (\(Self.describe(reply))); reading its state instead")
                self.replaceFromRedis(room, then: then)
                return
            }
            let changes: [PublishedChange]
            switch RoomHistory.read(entries, room: room) {
            case .success(let read): changes = read
            case .failure(let unreadable):
                self.roomUnreadable(room, because: unreadable.why)
                then?()
                return
            }
            if let first = changes.first, first.revision == from {
                self.gapsFilled += UInt64(changes.count)
                for change in changes { self.apply(change) }
            } else if let first = changes.first, first.revision > from {
                // The history no longer reaches back to the view. Its oldest
                // entry carries the whole state at that revision: resync
                // watchers to it, then give them the rest in order (so the
                // hub's own history holds them for WATCH <rev>).
                guard let state = self.state(revision: first.revision, route: first.route, room: room) else {
                    then?()
                    return
                }
                self.replace(room, with: state, tag: first.tag)
                self.gapsFilled += UInt64(changes.count)
                for change in changes.dropFirst() { self.apply(change) }
            } else {
                // Called only when the room is known to be ahead, yet the
                // history holds nothing after the view: read the room whole.
                self.replaceFromRedis(room, then: then)
                return
            }
            then?()
            self.releaseParked(room)
        }
    }

    /// Reads the room's state and hands it to the hub whole (watchers resync).
    private func replaceFromRedis(_ room: String, then: (() -> Void)? = nil) {
        guard let commands else { return }
        let track = track(room)
        track.filling = true
        commands.send(StoredRoomHash.command(keys, room: room)) { [weak self] reply in
            guard let self else { return }
            track.filling = false
            guard let reply else { return }
            let hash: StoredRoomHash
            switch StoredRoomHash.read(reply) {
            case .success(let read): hash = read
            case .failure(let unreadable):
                // A key of the wrong type, or an error: the room cannot be
                // read, nor changed (the change function fails on it too).
                // Its watchers keep the last state they were given; the
                // rest of the fleet's rooms carry on.
                self.roomUnreadable(room, because: unreadable.why)
                then?()
                return
            }
            let rev = hash.revision
            let state = rev == 0 ? nil : self.state(revision: rev, route: hash.route, room: room)
            if rev != 0 && state == nil {
                then?()
                return
            }
            self.replace(room, with: state, tag: hash.tag)
            then?()
            self.releaseParked(room)
        }
    }

    /// One room's keys answer with an error, hold the wrong type, a route
    /// that does not decode or a revision that is not one: said in the log
    /// (once per cause), its parked events are dropped (they cannot be
    /// placed) and its changes refused until its keys read again. One broken
    /// room must not keep the store down or hold up the others.
    private func roomUnreadable(_ room: String, because why: String) {
        if unreadableRooms[room] != why {
            log.error("backplane: room \(room) cannot be read from redis (key \(keys.state(room)): \(why)); "
                      + "its watchers stay at revision \(viewState(room).revision) until its keys are repaired")
        }
        unreadableRooms[room] = why
        tracks[room]?.parked.removeAll()
    }

    /// Reads a room's state hash again (one read at a time per room), after
    /// it was found unreadable or a change of it got an unexpected answer:
    /// a room that decodes now is back, and its watchers are resynced to
    /// it; one that does not is set aside (or stays so).
    private func recheck(_ room: String) {
        guard let commands, !recheckingRooms.contains(room) else { return }
        recheckingRooms.insert(room)
        let current = generation
        commands.send(StoredRoomHash.command(keys, room: room)) { [weak self] reply in
            guard let self else { return }
            self.recheckingRooms.remove(room)
            guard current == self.generation, let reply else { return }
            defer { self.recheckDone(room) }
            let hash: StoredRoomHash
            switch StoredRoomHash.read(reply) {
            case .success(let read): hash = read
            case .failure(let unreadable):
                self.roomUnreadable(room, because: unreadable.why)
                return
            }
            let rev = hash.revision
            guard let state = self.state(revision: rev, route: hash.route, room: room) else { return }
            // A room that was readable all along keeps its view (its events
            // may be on their way); only a repaired one is replaced.
            guard self.unreadableRooms.removeValue(forKey: room) != nil else { return }
            self.log.info("backplane: room \(room) reads again, at revision \(rev)")
            self.tracks[room]?.known = nil
            let tag = hash.tag
            if state == self.viewState(room) {
                // What was dropped never reached the room: nothing to resync.
                self.viewTags[room] = rev == 0 ? nil : tag
            } else {
                self.replace(room, with: rev == 0 ? nil : state, tag: tag)
            }
        }
    }

    /// Changes that waited for a room's keys to be read again: refused when
    /// it is still unreadable, sent when it reads.
    private func recheckDone(_ room: String) {
        guard let delegate, let track = tracks[room], track.inFlight == 0, !track.waiting.isEmpty else { return }
        guard let why = unreadableRooms[room] else {
            startRound(room)
            return
        }
        let refused = track.waiting
        track.waiting.removeAll()
        for (change, _) in refused {
            delegate.changeFinished(change, .refused(ProtocolError(.unavailable, Self.unreadableMessage(room, why))))
        }
        if track.isIdle { tracks[room] = nil }
    }

    private func replace(_ room: String, with state: RoomState?, tag: String) {
        guard let delegate else { return }
        resyncedRooms += 1
        viewTags[room] = state == nil ? nil : tag
        delegate.roomReplaced(room, with: state)
        // Changes Redis acknowledged are inside the new state (or were lost with Redis's data).
        if let track = tracks[room] {
            for (_, change) in track.acknowledged.sorted(by: { $0.key < $1.key }) {
                delegate.changeFinished(change, .applied(delegate.storedState(of: room) ?? delegate.changeRules.initialState))
            }
            track.acknowledged.removeAll()
            track.parked.removeAll { $0.revision <= (state?.revision ?? 0) }
        }
    }

    // MARK: - The catalog

    private func fetchCatalog() {
        commands?.send(["GET", keys.catalog]) { [weak self] reply in
            guard let self, let delegate = self.delegate, case .string(let json) = reply else { return }
            do {
                let fleet = try CatalogFile.decode(json)
                if let difference = delegate.changeRules.catalog.firstDifference(from: fleet) {
                    delegate.catalogChanged(to: fleet)
                    self.log.info("backplane: adopted the fleet's new catalog (\(fleet.screens.count) screens; first change: \(difference))")
                }
            } catch {
                self.log.error("backplane: the catalog stored in redis is not valid, kept ours: \(error)")
            }
        }
    }

    // MARK: - Connecting

    private func connect() {
        guard !closed else { return }
        generation += 1
        let current = generation
        var ready = 0
        let bothReady = { [weak self] in
            ready += 1
            if ready == 2 { self?.handshake(current) }
        }
        let lost = { [weak self] (reason: String) -> Void in self?.lost(current, reason) }
        commands = makeLink(bothReady, lost)
        subscriber = makeLink(bothReady, lost)
    }

    /// Checks the server, loads the function, agrees on the epoch and the
    /// catalog, subscribes, reads every room; then the store is up.
    private func handshake(_ current: Int) {
        guard current == generation, let commands else { return }
        let step = { [weak self] (what: String, reply: RedisReply?, next: () -> Void) in
            guard let self, current == self.generation else { return }
            if let error = reply?.errorText {
                self.backoff.redisIsLoading = error.hasPrefix("LOADING")
                self.refuse("redis refused \(what): \(error)")
                return
            }
            guard reply != nil else { return }  // the connection is gone; `lost` handles it
            next()
        }
        commands.send(["INFO", "server"]) { reply in
            step("INFO", reply) {
                let info = reply?.text ?? ""
                let version = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("redis_version:") }
                    .map { String($0.dropFirst("redis_version:".count)) } ?? "unknown"
                guard let major = Int(version.prefix { $0 != "." }), major >= 7 else {
                    self.refuse("redis \(version) is too old: the backplane needs 7.0 or newer (functions)", fatal: true)
                    return
                }
                commands.send(["FUNCTION", "LOAD", "REPLACE", ChangeFunction.source]) { reply in
                    step("FUNCTION LOAD", reply) { self.agreeOnEpoch(current) }
                }
            }
        }
    }

    private func agreeOnEpoch(_ current: Int) {
        guard let commands else { return }
        var generator = SystemRandomNumberGenerator()
        let fresh = String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
        commands.send(["SET", keys.epoch, fresh, "NX"]) { _ in }
        commands.send(["GET", keys.epoch]) { [weak self] reply in
            guard let self, current == self.generation, let value = reply?.text else { return }
            if let known = self.epoch, known != value {
                self.log.warn("backplane: redis holds a new epoch (its data was lost or replaced): every room is resynced")
                self.forgetEveryRoom()
            }
            self.epoch = value
            self.agreeOnCatalog(current)
        }
    }

    /// Every room back to "never changed"; watchers are resynced, and the
    /// rooms Redis holds now are read next.
    private func forgetEveryRoom() {
        guard let delegate else { return }
        for room in delegate.roomStates.keys.sorted() { replace(room, with: nil, tag: "") }
        tracks.removeAll()
        viewTags.removeAll()
    }

    private func agreeOnCatalog(_ current: Int) {
        guard let commands, let delegate else { return }
        let ours = delegate.changeRules.catalog
        let starting = startCompletion != nil
        commands.send([Array("SET".utf8), Array(keys.catalog.utf8), CatalogFile.encode(ours), Array("NX".utf8)]) { _ in }
        commands.send(["GET", keys.catalog]) { [weak self] reply in
            guard let self, current == self.generation, case .string(let json) = reply else { return }
            let fleet: Catalog
            do {
                fleet = try CatalogFile.decode(json)
            } catch {
                guard starting && self.settings.replaceCatalog else {
                    self.refuse("the fleet's catalog in redis (\(self.keys.catalog)) is not valid: \(error)", fatal: starting)
                    return
                }
                fleet = ours
            }
            if let difference = ours.firstDifference(from: fleet) {
                if starting && self.settings.replaceCatalog && fleet.initial != ours.initial {
                    // --replace-catalog works as a SIGHUP would, and a reload may not move `initial`:
                    // rooms never changed would show another screen at the same revision.
                    self.refuse("--replace-catalog cannot change the fleet's initial screen (\(difference))", fatal: true)
                    return
                } else if starting && self.settings.replaceCatalog {
                    commands.send([Array("SET".utf8), Array(self.keys.catalog.utf8), CatalogFile.encode(ours)]) { _ in }
                    commands.send(["PUBLISH", self.keys.catalogChannel, "changed"]) { _ in }
                    self.log.warn("backplane: replaced the fleet's catalog with this daemon's (--replace-catalog; first difference: \(difference))")
                } else if starting {
                    self.refuse("this daemon's catalog differs from the fleet's in redis (\(self.keys.catalog)): \(difference); "
                                + "start it with the same --screens file, or with --replace-catalog to make it the fleet's", fatal: true)
                    return
                } else {
                    delegate.catalogChanged(to: fleet)
                    self.log.info("backplane: adopted the fleet's catalog, changed while this daemon was cut off (first difference: \(difference))")
                }
            }
            self.subscribe(current)
        }
    }

    private func subscribe(_ current: Int) {
        guard let subscriber else { return }
        var confirmations = 0
        heldPushes = []
        subscriber.subscribe([keys.changesChannel, keys.catalogChannel]) { [weak self] reply in
            guard let self, current == self.generation else { return }
            if reply.elements?.first?.text == "subscribe" {
                confirmations += 1
                if confirmations == 2 { self.readEveryRoom(current) }
                return
            }
            self.pushed(reply)
        }
    }

    /// After subscribing (so no change falls between): every room Redis
    /// holds, compared with the view; behind is filled from the history or
    /// resynced, ahead (Redis lost changes) is resynced.
    private func readEveryRoom(_ current: Int) {
        guard let commands else { return }
        commands.send(["SMEMBERS", keys.rooms]) { [weak self] reply in
            guard let self, current == self.generation, let delegate = self.delegate else { return }
            guard let members = reply?.elements else {
                if reply != nil { self.refuse("redis answered SMEMBERS \(self.keys.rooms) with \(Self.describe(reply))") }
                return
            }
            var names = Set(members.compactMap(\.text).filter(Names.isValid))
            names.formUnion(delegate.roomStates.keys)
            // Every room is judged afresh: one repaired while this daemon was
            // cut off reads again, one broken meanwhile is found.
            names.formUnion(self.unreadableRooms.keys)
            self.unreadableRooms.removeAll()
            var waiting = names.count + 1
            let oneDone = {
                waiting -= 1
                if waiting == 0 { self.becomeUp(current) }
            }
            for room in names.sorted() {
                commands.send(StoredRoomHash.command(self.keys, room: room)) { reply in
                    guard current == self.generation, let reply else { return }
                    switch StoredRoomHash.read(reply) {
                    case .success(let hash):
                        self.reconcile(room, rev: hash.revision, route: hash.route, tag: hash.tag, then: oneDone)
                    case .failure(let unreadable):
                        self.roomUnreadable(room, because: unreadable.why)
                        oneDone()
                    }
                }
            }
            oneDone()
        }
    }

    private func reconcile(_ room: String, rev: UInt64, route: String, tag: String, then: @escaping () -> Void) {
        let view = viewState(room)
        // A room whose state does not decode is set aside here, before
        // anything replaces the view with it.
        if rev != 0 && state(revision: rev, route: route, room: room) == nil {
            then()
            return
        }
        if rev == view.revision {
            if rev != 0 && route != view.route {
                replace(room, with: state(revision: rev, route: route, room: room), tag: tag)
            } else if rev != 0 {
                viewTags[room] = tag
            }
            then()
        } else if rev > view.revision {
            fillGap(room, then: then)
        } else {
            log.warn("backplane: room \(room) is at revision \(rev) in redis, behind this daemon's \(view.revision): resynced")
            replace(room, with: rev == 0 ? nil : state(revision: rev, route: route, room: room), tag: tag)
            then()
        }
    }

    private func becomeUp(_ current: Int) {
        guard current == generation else { return }
        isUp = true
        backoff.reset()
        if let started = outageStartedAt {
            log.info("backplane: redis at \(settings.endpoint) is back after \(loop.nowMilliseconds &- started) ms; every room caught up")
            outageStartedAt = nil
        }
        let held = heldPushes ?? []
        heldPushes = nil
        for i in stride(from: 0, to: held.count - 1, by: 2) {
            deliverPush(channel: String(decoding: held[i].dropLast(), as: UTF8.self), payload: held[i + 1])
        }
        startHeartbeat(current)
        if let completion = startCompletion {
            startCompletion = nil
            completion(nil)
        }
    }

    private func startHeartbeat(_ current: Int) {
        heartbeat?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: Self.heartbeatMilliseconds, repeatMilliseconds: Self.heartbeatMilliseconds) { [weak self] in
            guard let self, current == self.generation, let commands = self.commands else { return }
            commands.send(["GET", self.keys.epoch]) { reply in
                guard current == self.generation, let reply else { return }
                if reply.text != self.epoch {
                    self.fault("the fleet's epoch in redis changed (data lost or flushed)")
                }
            }
        }
        heartbeat = timer
    }

    // MARK: - Failures

    /// A connection of the current attempt was lost or could not be made.
    private func lost(_ current: Int, _ reason: String) {
        guard current == generation else { return }
        goDown("redis at \(settings.endpoint) unreachable: \(reason)")
    }

    /// Something Redis said cannot be trusted: start the connection over,
    /// which re-reads every room.
    private func fault(_ reason: String) {
        guard !closed else { return }
        log.warn("backplane: \(reason); reconnecting to resynchronise")
        goDown("resynchronising with redis: \(reason)")
    }

    /// A refusal during the handshake: fatal at start (the daemon exits),
    /// otherwise an outage retried with backoff.
    private func refuse(_ reason: String, fatal: Bool = false) {
        if let completion = startCompletion, fatal {
            startCompletion = nil
            close()
            completion(StartError(description: reason))
            return
        }
        goDown(reason)
    }

    private func goDown(_ reason: String) {
        guard !closed else { return }
        let wasUp = isUp
        isUp = false
        downReason = reason
        generation += 1
        heartbeat?.close()
        heartbeat = nil
        heldPushes = nil
        // Reads of the old connections may never be answered; every room is read again on reconnecting.
        recheckingRooms.removeAll()
        let oldCommands = commands, oldSubscriber = subscriber
        commands = nil
        subscriber = nil
        if let completion = startCompletion {
            startCompletion = nil
            oldCommands?.close()
            oldSubscriber?.close()
            close()
            completion(StartError(description: "cannot use redis at \(settings.endpoint): \(reason)"))
            return
        }
        if wasUp {
            outages += 1
            outageStartedAt = loop.nowMilliseconds
            log.warn("backplane down: \(reason); refusing room commands (ERR unavailable) and reconnecting")
        }
        // Changes in flight are answered `unavailable` by their reply handlers (nil replies).
        oldCommands?.close()
        oldSubscriber?.close()
        for (_, track) in tracks {
            track.parked.removeAll()
            track.filling = false
        }
        // Changes still queued (none in flight for their room) are refused now, in order.
        for (room, track) in tracks where track.inFlight == 0 && !track.waiting.isEmpty { startRound(room) }
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        retryTimer?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: backoff.nextDelay()) { [weak self, timer] in
            timer.close()
            self?.connect()
        }
        retryTimer = timer
    }

    static func describe(_ reply: RedisReply?) -> String {
        guard let reply else { return "no reply" }
        switch reply {
        case .error(let text): return text
        case .status(let text): return text
        case .string(let bytes): return "\"\(String(decoding: bytes.prefix(80), as: UTF8.self))\""
        case .integer(let value): return String(value)
        case .null: return "nil"
        case .array(let elements): return "an array of \(elements.count)"
        }
    }
}
