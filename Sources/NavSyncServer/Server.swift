import NavSyncCore

/// The store: owns every room and session, turns lines into commands,
/// commands into state changes, and changes into events for watchers.
/// It does no IO itself; bytes come in through `receive` and leave through
/// each session's `Connection` when `flush` runs once per loop turn.
///
/// All methods must be called on the loop thread.
public final class Server {
    public static let defaultRoom = Names.defaultRoom

    public private(set) var catalog: Catalog
    var parser: CommandParser
    let config: ServerConfig
    var limits: Limits { config.limits }
    /// Decides and keeps changes: the journal file, or the backplane.
    let store: RoomStore
    var log: Logger
    private let secondsSinceStart: () -> UInt64

    /// Every room in memory, with the counts of changed rooms and watchers.
    let rooms: RoomRegistry
    /// Every room's members and presence followers (Server+Presence).
    let presence = PresenceTable()
    /// Grants, the anonymous role and failed credentials, for every door.
    public let access: AccessPolicy
    var sessions: [ObjectIdentifier: Session] = [:]
    private var nextSessionID = 1
    /// Output queues, the turn's events, the flush and the output budget.
    let fanOut: FanOut
    /// Sessions whose lines wait for their output to drain (Server+HeldLines).
    var sessionsHoldingLines: [Session] = []

    // Figures for STATS (the output's own are the fan-out's).
    var commandsHandled: UInt64 = 0

    /// Changes not yet fsynced (`--fsync batch`) and their undo.
    let undurable: UndurableChanges
    /// Sessions still in memory, open or not; back to the open ones once
    /// every closed connection has been freed.
    public let liveSessions = LiveCount()
    /// Transport objects (the daemon's links) still in memory; the daemon
    /// counts them, the server reports them.
    public let liveLinks = LiveCount()
    /// New revisions made through this daemon (no-ops and refusals are not changes).
    var changesMade: UInt64 = 0
    /// Rows of figures kept outside the hub (see `addFigures`).
    var figureSources: [() -> [Figure]] = []
    /// Per-connection log lines, summarised past 50 a second; the
    /// daemon's TLS handshakes write through it too.
    public let connectionLog: ConnectionLog

    /// A daemon of its own: changes go to the journal file (nil: memory only).
    /// - Parameters:
    ///   - rooms: the rooms loaded from the state file.
    ///   - recent: each room's changes from the state file's tail, oldest
    ///     first: the resume history a watcher that was behind before the
    ///     restart can continue from (each room keeps its `--history` newest).
    ///   - journal: where changes are made durable; nil keeps state in memory only.
    ///   - secondsSinceStart: a clock for `uptime_s`.
    public convenience init(config: ServerConfig, catalog: Catalog, rooms loaded: [String: RoomState],
                            recent: [String: [JournalFile.RecentChange]] = [:],
                            journal: Journal?, log: Logger, secondsSinceStart: @escaping () -> UInt64,
                            milliseconds: (() -> UInt64)? = nil) {
        self.init(config: config, catalog: catalog, rooms: loaded, store: JournalStore(journal: journal, log: log),
                  log: log, secondsSinceStart: secondsSinceStart, milliseconds: milliseconds)
        for (name, changes) in recent {
            guard let room = rooms.existing(name), room.state?.revision == changes.last?.state.revision else { continue }
            for change in changes {
                room.history.append(Wire.event(change.state, op: change.op), revision: change.state.revision)
            }
        }
    }

    /// - Parameters:
    ///   - rooms: the rooms the store holds at start.
    ///   - store: decides and keeps changes; the server becomes its delegate.
    ///   - milliseconds: a finer clock, for the guessing throttle and
    ///     the connection log's seconds (the loop's, in the daemon); nil
    ///     takes `secondsSinceStart` in milliseconds.
    public init(config: ServerConfig, catalog: Catalog, rooms loaded: [String: RoomState],
                store: RoomStore, log: Logger, secondsSinceStart: @escaping () -> UInt64,
                milliseconds: (() -> UInt64)? = nil) {
        self.config = config
        self.catalog = catalog
        self.parser = CommandParser(catalog: catalog, maxDepth: config.limits.maxDepth)
        self.store = store
        self.log = log
        self.secondsSinceStart = secondsSinceStart
        let clock = milliseconds ?? { secondsSinceStart() * 1000 }
        self.access = AccessPolicy(grants: config.grants, tokensConfigured: config.tokensConfigured,
                                   anonymous: config.anonymous, log: log,
                                   seconds: secondsSinceStart, milliseconds: clock)
        self.fanOut = FanOut(limits: config.limits, log: log)
        self.connectionLog = ConnectionLog(log: log, milliseconds: clock)
        self.rooms = RoomRegistry(states: loaded, initialStack: catalog.initialStack, limits: config.limits)
        self.undurable = UndurableChanges(rooms: rooms, fanOut: fanOut)
        store.delegate = self
        fanOut.currentState = { [unowned self] session in state(of: session.room) }
        fanOut.finishEnding = { [unowned self] session in finishEnding(session, graceful: true) }
    }

    // MARK: - Connections

    /// Registers a new connection. Over `--max-clients` it is sent `ERR busy`
    /// and closed; the returned session is then already ending.
    @discardableResult
    public func accept(_ connection: Connection) -> Session {
        let session = Session(id: nextSessionID, connection: connection,
                              grant: access.anonymous, maxLineBytes: limits.maxLineBytes,
                              liveCount: liveSessions)
        nextSessionID += 1
        session.memberID = store.memberIDPrefix + String(session.id)
        guard sessions.count < limits.maxClients else {
            connectionLog.opened("\(session.label) refused: \(limits.maxClients) connections already open", level: .warn)
            fanOut.reply(session, Wire.error(ProtocolError(.busy, "too many connections (max \(limits.maxClients)); try again later")))
            session.endReason = .busy
            return session
        }
        sessions[ObjectIdentifier(session)] = session
        connectionLog.opened("\(session.label) connected (\(sessions.count) open)")
        return session
    }

    /// Bytes read from the session's connection.
    public func receive(_ bytes: some Collection<UInt8>, from session: Session) {
        guard !session.isClosing else { return }
        session.framer.append(bytes)
        runFrames(session)
        fanOut.applyBackpressure(session)
        if session.changes.waitingForStore { pauseIfHeldBehindStore(session) }
    }

    /// Runs the session's complete lines until one waits for the store;
    /// the rest stay in the framer until that one is answered, so replies
    /// keep the order of the commands.
    /// Stops, too, once the session's output passes `--max-pending`: a line
    /// is run only while what it may add is bounded (one reply), so a peer
    /// that pipelines requests for big answers and never reads holds at most
    /// the bound plus one reply (see Server+HeldLines).
    func runFrames(_ session: Session) {
        let outer = session.changes.isRunningLines
        session.changes.isRunningLines = true
        defer { session.changes.isRunningLines = outer }
        while !session.isClosing && !session.changes.waitingForStore {
            if session.pendingBytes > limits.maxPendingBytes {
                if session.framer.bufferedByteCount > 0 { holdLinesForOutput(session) }
                return
            }
            guard let frame = session.framer.next() else { return }
            handle(frame, from: session)
        }
    }

    /// The peer finished sending: it is gone, watching or not, as in
    /// Redis and NATS. A daemon cannot tell a half-close from a client that
    /// exited, and a watcher kept for a departed client holds a slot and
    /// inflates the counts for as long as its room stays quiet. Everything
    /// it sent is answered (its last unterminated line still runs; the events
    /// after a CONTINUE are part of that answer), live events after its last
    /// answer are not sent, and the connection is closed.
    public func inputEnded(_ session: Session) {
        guard !session.isClosing else { return }
        if !session.changes.isIdle || session.linesHeldForOutput {
            // Its last lines run once the store has answered, or its output has drained.
            session.changes.inputEndedWhileWaiting = true
            return
        }
        if let frame = session.framer.finish() {
            let outer = session.changes.isRunningLines
            session.changes.isRunningLines = true
            handle(frame, from: session)
            session.changes.isRunningLines = outer
        }
        guard !session.isClosing else { return }
        if !session.changes.isIdle {
            session.changes.inputEndedWhileWaiting = true
            return
        }
        fanOut.skipOwedEvents(session)
        fanOut.end(session, .peerClosed)
    }

    /// Its input ended while lines waited (for the store or for its output):
    /// once nothing waits, the end is taken as it would have been at once.
    /// Returns true when it did.
    @discardableResult
    func endInputIfOwed(_ session: Session) -> Bool {
        guard session.changes.inputEndedWhileWaiting, session.changes.isIdle else { return false }
        session.changes.inputEndedWhileWaiting = false
        inputEnded(session)
        return true
    }

    /// The transport failed; nothing more can be sent.
    public func transportFailed(_ session: Session, _ what: String) {
        guard !session.isEnded else { return }
        fanOut.discard(session)
        session.endReason = session.endReason ?? .transportError(what)
        finishEnding(session, graceful: false)
    }

    /// The transport has sent everything it held for this session.
    public func writeQueueDrained(_ session: Session) {
        guard !session.isEnded, session.output.owesResync || session.output.readingPaused else { return }
        fanOut.markDirty(session)
    }

    // MARK: - Lines and commands

    private func handle(_ frame: LineFramer.Frame, from session: Session) {
        switch frame {
        case .tooLong:
            fanOut.reply(session, Wire.error(ProtocolError(.lineTooLong, "line longer than \(limits.maxLineBytes) bytes; discarded")))
        case .line(let line):
            // The grant judges the verb before the arguments (see `parse`).
            guard let parsed = parser.parse(line, grant: session.grant, room: session.room) else { return }
            commandsHandled += 1
            if log.isDebugEnabled {
                log.debug("\(session.label) < \(LoggedLine.text(line))")
            }
            switch parsed {
            case .failure(let error):
                fanOut.reply(session, Wire.error(error))
            case .success(let command):
                run(command, for: session)
            }
        }
    }

    func run(_ command: Command, for session: Session) {
        if session.changes.changesInFlight > 0
            && !session.changes.mayRunBesideChangesInFlight(command, storeIsAvailable: store.unavailableReason == nil) {
            // Its answer must follow theirs: it runs once they are answered.
            session.changes.holdBehindChanges(command)
            return
        }
        if command.needsRoomState, let why = unavailableReason(for: command, of: session) {
            // Nothing moves: a refused JOIN stays put, a refused WATCH does not subscribe.
            fanOut.reply(session, Wire.error(ProtocolError(.unavailable, why)))
            return
        }
        if case .mutate = command {} else if store.holdsUndurableChanges {
            // Answers below may show a room's state: only durable state.
            _ = store.makeChangesDurable()
        }
        switch command {
        case .get:
            fanOut.reply(session, Wire.state(state(of: session.room)))
        case .mutate(let mutation, let expected):
            submit(ChangeRequest(room: session.room, mutation: mutation, ifRevision: expected, session: session,
                                 ticket: session.changes.nextTicket))
        case .watch(let after):
            resumeWatch(session, after: after)
        case .unwatch:
            stopWatching(session)
            fanOut.reply(session, Wire.ok(revisionShown(to: session)))
        case .join(let name):
            let followsPresence = leavePresenceBeforeJoin(session, to: name)
            join(session, name)
            fanOut.reply(session, Wire.state(state(of: name)))
            if followsPresence { followPresenceAfterJoin(session) }
        case .screens:
            fanOut.reply(session, Wire.screens(catalog))
        case .messages:
            fanOut.reply(session, Wire.messages(catalog))
        case .stats:
            fanOut.reply(session, Wire.stats(figures(for: session)))
        case .rooms:
            fanOut.reply(session, Wire.rooms(rooms.changedRoomsByName().filter { session.grant.covers($0.name) }))
        case .ping(let text):
            fanOut.reply(session, Wire.pong(text))
        case .hello:
            fanOut.reply(session, Wire.hello(serverVersion: config.version))
        case .auth(let token):
            authenticate(session, token)
        case .quit:
            fanOut.reply(session, Wire.bye)
            fanOut.end(session, .quit)
        case .help:
            fanOut.reply(session, Wire.help())
        case .whoami:
            fanOut.reply(session, Wire.you(id: session.memberID, name: session.presence.name, grant: session.grant))
        case .name(let name):
            setName(name, of: session)
        case .at(let navigation):
            look(session, at: navigation)
        case .who:
            fanOut.reply(session, Wire.members(members(of: session.room)))
        case .presence(let on):
            followPresence(session, on)
        }
    }

    /// Changes are judged by the store itself (an unreadable room's change
    /// makes it read the room again); reads ask about the room they read,
    /// which for `JOIN` is the room it moves to.
    private func unavailableReason(for command: Command, of session: Session) -> String? {
        switch command {
        case .mutate: return store.unavailableReason
        case .join(let name): return store.unavailableReason(forRoom: name)
        default: return store.unavailableReason(forRoom: session.room)
        }
    }

    // MARK: - Rooms and watchers

    func state(of name: String) -> RoomState { rooms.state(of: name) }

    /// Watching from a revision, judged against the fleet-wide revision
    /// (`WATCH <rev>`; the web door's resumes call it too). When this
    /// daemon's copy of the room is behind `revision` and the store's copy
    /// may trail the fleet, the session's lines wait while the store
    /// catches the copy up; then the watch is answered from the caught-up
    /// copy, so a client that comes over from another daemon of the fleet
    /// never gets a `STATE` older than the revision it already has, nor an
    /// event it already applied. A plain watch (`revision` nil), or one
    /// from a revision the copy holds, is answered at once.
    public func resumeWatch(_ session: Session, after revision: UInt64?) {
        let room = session.room
        guard let revision, store.copyMayTrail, revision > state(of: room).revision else {
            watch(session, after: revision)
            return
        }
        session.changes.beginCatchUp()
        store.catchUp(room, to: revision) { [weak self] failure in
            guard let self else { return }
            session.changes.endCatchUp()
            guard !session.isClosing else { return }
            if let why = failure ?? store.unavailableReason(forRoom: room) {
                // The store went away meanwhile: refused, not subscribed.
                fanOut.reply(session, Wire.error(ProtocolError(.unavailable, why)))
            } else {
                watch(session, after: revision)
            }
            // Answered inside `catchUp`: the lines already running go on by themselves.
            guard !session.changes.isRunningLines else { return }
            continueAfterStore(session)
        }
    }

    /// `WATCH` and `WATCH <rev>`: subscribe (or renew the subscription)
    /// and answer with a snapshot, or with `CONTINUE <rev>` and the events
    /// after `<rev>` when the room's history still holds all of them. The
    /// replayed events are queued like live ones, so a replay too big for
    /// `--max-pending` ends in the slow watcher's resync.
    private func watch(_ session: Session, after revision: UInt64?) {
        let current = state(of: session.room)
        startWatching(session)
        guard let revision,
              let missed = rooms.existing(session.room)?.history.events(after: revision, current: current.revision)
                ?? (revision == current.revision ? [] : nil) else {
            fanOut.reply(session, Wire.state(current))
            return
        }
        fanOut.reply(session, Wire.continued(after: revision))
        for event in missed {
            // Counted as handed out before it is queued: queuing it may drop
            // it again (and every other queued event) for --max-pending.
            fanOut.noteEventsReplayed(1)
            guard fanOut.queueEvent(session, event) else {
                fanOut.noteEventsSkipped(1)
                break
            }
        }
    }

    private func startWatching(_ session: Session) {
        // A repeated WATCH is answered with a fresh snapshot, which also
        // settles any resync this watcher was owed.
        fanOut.resyncAnswered(session)
        guard !session.watching else { return }
        session.watching = true
        fanOut.follow(session, rooms.addWatcher(session, to: session.room))
        memberArrived(session)
    }

    func stopWatching(_ session: Session) {
        // Events broadcast before it stopped watching are still its to receive.
        fanOut.unfollow(session)
        guard session.watching else { return }
        session.watching = false
        rooms.removeWatcher(session, from: session.room)
        memberLeft(session, room: session.room)
    }

    func join(_ session: Session, _ name: String) {
        guard name != session.room else {
            fanOut.resyncAnswered(session)
            return
        }
        let wasWatching = session.watching
        stopWatching(session)
        session.room = name
        if wasWatching { startWatching(session) }
    }

    /// Removes an ending session from its room and from the count; nothing
    /// is queued for it afterwards.
    func detach(_ session: Session) {
        stopWatching(session)
        stopFollowingPresence(session)
        if sessions.removeValue(forKey: ObjectIdentifier(session)) != nil {
            rooms.dropIfIdle(session.room)
        }
    }

    /// Ends a session once its queued output has been handed over: it leaves
    /// its room and the count, and its connection is closed.
    func finishEnding(_ session: Session, graceful: Bool) {
        guard !session.isEnded else { return }
        session.isEnded = true
        if session.output.isBacklogged { fanOut.backlogHoldsEnded = true }
        detach(session)
        let reason = session.endReason ?? .peerClosed
        connectionLog.closed("\(session.label) closed: \(reason)", level: reason == .busy ? .debug : .info)
        if graceful {
            session.connection.closeAfterSending()
        } else {
            session.connection.close()
        }
    }

    /// Runs once per loop turn, before the loop waits for IO: makes batched
    /// journal appends durable (or undoes them), then writes each dirty session's output as
    /// one batch.
    public func flush() {
        // Lines held while their session's output was over the bound run
        // first, so their answers leave in this turn.
        runLinesHeldForOutput()
        // The turn's member changes become lines, and updates the store
        // sends with the turn's other work.
        settlePresence()
        // The turn's changes become durable, or are undone, before any of
        // the turn's output leaves.
        store.endOfTurn()
        fanOut.flush()
        flushPresenceMadeDuringFlush()
    }

    // MARK: - Reload and shutdown

    public enum ReloadOutcome: Equatable, Sendable {
        case unchanged
        /// The catalog differs; this many watchers were sent `CATALOG`.
        case changed(watchersTold: Int)
    }

    /// A reload that would move every untouched room without a revision.
    public struct InitialScreenChanged: Error, CustomStringConvertible {
        public var from: String
        public var to: String
        public var description: String {
            "the new catalog starts on \(to), not \(from); rooms never changed would move without a revision"
        }
    }

    /// New mutations are checked against the new catalog; stacks already
    /// held stay as they are even if they name screens it dropped. A
    /// catalog that differs is announced to every watcher with `CATALOG`,
    /// queued like a reply (after the events it already owes, never dropped);
    /// one that changes `initial` is refused and the old one stays.
    @discardableResult
    public func reload(catalog: Catalog) throws(InitialScreenChanged) -> ReloadOutcome {
        guard catalog.initial == self.catalog.initial else {
            throw InitialScreenChanged(from: self.catalog.initial, to: catalog.initial)
        }
        guard catalog != self.catalog else { return .unchanged }
        self.catalog = catalog
        parser = CommandParser(catalog: catalog, maxDepth: limits.maxDepth)
        rooms.dropIdleRooms()
        var told = 0
        for session in sessions.values where session.watching && !session.isClosing {
            fanOut.reply(session, Wire.catalogChanged)
            told += 1
        }
        return .changed(watchersTold: told)
    }

    /// Says `BYE` to everyone, hands the last output to the transports, makes
    /// the journal durable and closes every session gracefully.
    public func shutdown() {
        for session in sessions.values where !session.isClosing {
            fanOut.reply(session, Wire.bye)
            session.endReason = .shutdown
        }
        flush()
    }

    // MARK: - Figures

    /// Every room that has been changed, for tests and for compaction.
    public var roomStates: [String: RoomState] { rooms.statesByName }

    public var connectionCount: Int { sessions.count }

    var uptimeSeconds: UInt64 { secondsSinceStart() }
}
