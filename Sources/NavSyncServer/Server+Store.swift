import NavSyncCore

/// The hub's side of the store seam: replies when a change ends, broadcasts
/// when a room changes, resyncs when a room's history was lost.
extension Server: RoomStoreDelegate {
    /// Lines held behind a change in flight past this many bytes pause
    /// reading from that client until the store answers.
    static let heldInputBytesBeforePause = 64 * 1024

    public func storedState(of room: String) -> RoomState? { rooms.storedState(of: room) }

    public var roomsWithStateCount: Int { rooms.changedCount }

    public var changeRules: ChangeRules {
        ChangeRules(catalog: catalog, maxDepth: limits.maxDepth, maxRooms: limits.maxRooms)
    }

    /// Changes of one session in flight at once, at most (see `ChangePipeline`).
    static let maxChangesInFlightPerSession = ChangePipeline.maxChangesInFlight

    /// Hands a change to the store; while the store takes changes behind it
    /// (pipelining), the session's next lines keep running.
    func submit(_ change: ChangeRequest) {
        let session = change.session
        _ = session.changes.takeTicket()
        store.submit(change)
        let mayFollow = !session.changes.isInFlight(ticket: change.ticket) || store.mayPipeline(after: change)
        session.changes.submitted(nextChangeMayFollow: mayFollow)
    }

    public func changeFinished(_ change: ChangeRequest, _ outcome: ChangeOutcome) {
        let session = change.session
        if !session.changes.storeAnswered(change) {
            // An earlier change of this session is still in flight: its answer goes first.
            var held = outcome
            if case .applied(let state) = outcome {
                // Stores finish applied changes in order (RoomStore.mayPipeline); should one not,
                // the room still moves in the store's order and only the OK waits.
                changesMade += 1
                roomChanged(change.room, to: state, op: change.mutation.op)
                held = .unchanged(revision: state.revision)
            }
            session.changes.holdEarly(change, held)
        } else {
            answer(change, outcome)
            while let (next, held) = session.changes.answerSent() {
                answer(next, held)
            }
        }
        session.changes.settle()
        // A store that answered inside `submit` leaves the rest to the loop already running the lines.
        guard !session.changes.isRunningLines else { return }
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
                ? undurable.note(roomName: change.room, previous: rooms.storedState(of: change.room),
                                 changesBefore: changesMade - 1) : 0
            fanOut.reply(session, Wire.ok(state.revision), unsyncedBatch: batch)
            roomChanged(change.room, to: state, op: change.mutation.op)
        case .unchanged(let revision):
            fanOut.reply(session, Wire.ok(revision))
        case .refused(let error):
            fanOut.reply(session, Wire.error(error))
        }
    }

    /// Runs the command that waited for the changes in flight, then the
    /// lines behind it, then what waited behind them.
    func continueAfterStore(_ session: Session) {
        guard !session.isEnded else { return }
        if let command = session.changes.takeCommandBehindChanges() {
            let outer = session.changes.isRunningLines
            session.changes.isRunningLines = true
            run(command, for: session)
            session.changes.isRunningLines = outer
        }
        runFrames(session)
        endInputIfOwed(session)
        pauseIfHeldBehindStore(session)
    }

    /// Pauses reading while many lines wait behind a change; resumes when
    /// they have run (unless the output backpressure still holds it).
    func pauseIfHeldBehindStore(_ session: Session) {
        guard !session.isClosing else { return }
        let hold = session.changes.waitingForStore && session.framer.bufferedByteCount > Self.heldInputBytesBeforePause
        if hold && !session.changes.pausedForStore {
            session.changes.pausedForStore = true
            session.connection.pauseReading()
        } else if !hold && session.changes.pausedForStore {
            session.changes.pausedForStore = false
            if !session.output.readingPaused { session.connection.resumeReading() }
        }
    }

    public func roomChanged(_ name: String, to state: RoomState, op: String) {
        let room = rooms.room(named: name)
        rooms.setState(state, of: room)
        let event = Wire.event(state, op: op)
        room.history.append(event, revision: state.revision)
        fanOut.broadcast(event, to: room)
    }

    public func roomReplaced(_ name: String, with state: RoomState?) {
        guard let room = rooms.setState(state, of: name) else { return }
        room.history.removeAll()
        // Every watcher is owed a fresh STATE: the events between what it
        // has and the new state are not known, so none are sent.
        for watcher in room.watchers where !watcher.isClosing { fanOut.oweResync(watcher) }
        rooms.dropIfIdle(name)
    }

    public func undurableChangesSettled(durable: Bool) {
        if let changesBefore = undurable.settle(durable: durable) { changesMade = changesBefore }
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
