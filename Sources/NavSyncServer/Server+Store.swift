import NavSyncCore

/// The hub's side of the store seam: replies when a change ends, broadcasts
/// when a room changes, resyncs when a room's history was lost.
extension Server: RoomStoreDelegate {
    /// Lines held behind a change in flight past this many bytes pause
    /// reading from that client until the store answers.
    static let heldInputBytesBeforePause = 64 * 1024

    public func storedState(of room: String) -> RoomState? { rooms[room]?.state }

    public var roomsWithStateCount: Int { roomsWithState }

    public var changeRules: ChangeRules {
        ChangeRules(catalog: catalog, maxDepth: limits.maxDepth, maxRooms: limits.maxRooms)
    }

    /// Changes of one session in flight at once, at most: past it, its
    /// lines wait (memory per connection stays bounded however much it pipelines).
    static let maxChangesInFlightPerSession = 128

    /// Hands a change to the store; while the store takes changes behind it
    /// (pipelining), the session's next lines keep running.
    func submit(_ change: ChangeRequest) {
        let session = change.session
        session.nextTicket += 1
        session.changesInFlight += 1
        session.waitingForStore = true
        store.submit(change)
        let stillInFlight = change.ticket >= session.nextTicketToAnswer && session.earlyOutcomes[change.ticket] == nil
        session.nextChangeMayFollow = !stillInFlight || store.mayPipeline(after: change)
        updateWaiting(session)
    }

    /// Whether `command` may run while the session's changes are in flight:
    /// only another change, taken behind them by the store. Anything else
    /// (its answer could show state or must come after theirs) waits.
    func mayRunBesideChangesInFlight(_ command: Command, _ session: Session) -> Bool {
        guard case .mutate = command else { return false }
        return session.nextChangeMayFollow && session.commandBehindChanges == nil
            && session.changesInFlight < Self.maxChangesInFlightPerSession && store.unavailableReason == nil
    }

    private func updateWaiting(_ session: Session) {
        session.waitingForStore = session.changesInFlight > 0
            && (!session.nextChangeMayFollow || session.commandBehindChanges != nil
                || session.changesInFlight >= Self.maxChangesInFlightPerSession)
    }

    public func changeFinished(_ change: ChangeRequest, _ outcome: ChangeOutcome) {
        let session = change.session
        session.changesInFlight -= 1
        if change.ticket != session.nextTicketToAnswer {
            // An earlier change of this session is still in flight: its answer goes first.
            var held = outcome
            if case .applied(let state) = outcome {
                // Stores finish applied changes in order (RoomStore.mayPipeline); should one not,
                // the room still moves in the store's order and only the OK waits.
                changesMade += 1
                roomChanged(change.room, to: state, op: change.mutation.op)
                held = .unchanged(revision: state.revision)
            }
            session.earlyOutcomes[change.ticket] = (change, held)
        } else {
            answer(change, outcome)
            session.nextTicketToAnswer += 1
            while let (next, held) = session.earlyOutcomes.removeValue(forKey: session.nextTicketToAnswer) {
                answer(next, held)
                session.nextTicketToAnswer += 1
            }
        }
        if session.changesInFlight == 0 { session.nextChangeMayFollow = false }
        updateWaiting(session)
        // A store that answered inside `submit` leaves the rest to the loop already running the lines.
        guard !session.isRunningLines else { return }
        continueAfterStore(session)
    }

    /// The reply to one change and, when applied, the room's move and broadcast.
    private func answer(_ change: ChangeRequest, _ outcome: ChangeOutcome) {
        let session = change.session
        switch outcome {
        case .applied(let state):
            changesMade += 1
            // Not yet durable (batched fsync): tagged, to be taken back if the fsync fails.
            let batch = store.holdsUndurableChanges
                ? noteUndurable(roomName: change.room, previous: rooms[change.room]?.state) : 0
            reply(session, Wire.ok(state.revision), unsyncedBatch: batch)
            roomChanged(change.room, to: state, op: change.mutation.op)
        case .unchanged(let revision):
            reply(session, Wire.ok(revision))
        case .refused(let error):
            reply(session, Wire.error(error))
        }
    }

    /// Runs the command that waited for the changes in flight, then the
    /// lines behind it, then what waited behind them.
    private func continueAfterStore(_ session: Session) {
        guard !session.isEnded else { return }
        if session.changesInFlight == 0, let command = session.commandBehindChanges {
            session.commandBehindChanges = nil
            updateWaiting(session)
            let outer = session.isRunningLines
            session.isRunningLines = true
            run(command, for: session)
            session.isRunningLines = outer
        }
        runFrames(session)
        if !session.waitingForStore && session.changesInFlight == 0 && session.inputEndedWhileWaiting {
            session.inputEndedWhileWaiting = false
            inputEnded(session)
        }
        pauseIfHeldBehindStore(session)
    }

    /// Pauses reading while many lines wait behind a change; resumes when
    /// they have run (unless the output backpressure still holds it).
    func pauseIfHeldBehindStore(_ session: Session) {
        guard !session.isClosing else { return }
        let hold = session.waitingForStore && session.framer.bufferedByteCount > Self.heldInputBytesBeforePause
        if hold && !session.pausedForStore {
            session.pausedForStore = true
            session.connection.pauseReading()
        } else if !hold && session.pausedForStore {
            session.pausedForStore = false
            if !session.readingPaused { session.connection.resumeReading() }
        }
    }

    public func roomChanged(_ name: String, to state: RoomState, op: String) {
        let room = room(named: name)
        if room.state == nil { roomsWithState += 1 }
        room.state = state
        let event = Wire.event(state, op: op)
        room.history.append(event, revision: state.revision)
        broadcast(event, to: room)
    }

    public func roomReplaced(_ name: String, with state: RoomState?) {
        let room = rooms[name]
        if room?.state != nil && state == nil { roomsWithState -= 1 }
        if room?.state == nil && state != nil { roomsWithState += 1 }
        guard let room = room ?? (state == nil ? nil : self.room(named: name)) else { return }
        room.state = state
        room.history.removeAll()
        // Every watcher is owed a fresh STATE: the events between what it
        // has and the new state are not known, so none are sent.
        for watcher in room.watchers where !watcher.isClosing {
            takeOwedEvents(watcher)
            watcher.owesResync = true
            markDirty(watcher)
        }
        dropIfIdle(name)
    }

    public func catalogChanged(to catalog: Catalog) {
        do {
            try reload(catalog: catalog)
        } catch {
            log.error("the store's new catalog was refused, the old one stays: \(error)")
        }
    }

    /// For `/healthz` and the like: false while the store cannot be reached.
    public var storeIsAvailable: Bool { store.unavailableReason == nil }
}
