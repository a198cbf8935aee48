import NavSyncCore

/// Output side of the server: per-session queues, the slow-watcher policy,
/// and the once-per-turn flush that turns a turn's output into one write per
/// connection.
extension Server {
    /// - Parameter unsyncedBatch: non-zero for the `OK` of a change not yet fsynced.
    func reply(_ session: Session, _ bytes: [UInt8], unsyncedBatch: UInt64 = 0) {
        guard !session.isEnded else { return }
        // Events broadcast before this reply go out before it.
        takeOwedEvents(session)
        session.outbox.append(Session.Output(bytes: bytes, isEvent: false, unsyncedBatch: unsyncedBatch))
        session.outboxBytes += bytes.count
        markDirty(session)
    }

    /// Queues one event for a watcher. The bytes are shared with every other
    /// watcher of the room; nothing is copied here. Returns false when the
    /// watcher does not take it (closing, or owed a resync).
    @discardableResult
    func queueEvent(_ session: Session, _ bytes: [UInt8], unsyncedBatch: UInt64 = 0) -> Bool {
        guard !session.isClosing, !session.owesResync else { return false }
        session.outbox.append(Session.Output(bytes: bytes, isEvent: true, unsyncedBatch: unsyncedBatch))
        session.outboxBytes += bytes.count
        markDirty(session)
        if session.pendingBytes > config.limits.maxPendingBytes {
            dropEvents(session)
        }
        return true
    }

    /// The range of its room's current-turn events the session still owes, if any.
    func owedEvents(_ session: Session) -> Range<Int>? {
        guard let room = session.watchedRoom, !room.turnEvents.isEmpty else { return nil }
        let start = session.eventTurn == room.turn ? session.eventCursor : 0
        return start < room.turnEvents.count ? start..<room.turnEvents.count : nil
    }

    /// Skips the events of this turn the session has not taken yet: they
    /// came after its last answer, and it is leaving.
    func skipOwedEvents(_ session: Session) {
        guard let room = session.watchedRoom, let range = owedEvents(session) else { return }
        markTaken(session, room)
        noteEventsSkipped(range.count)
    }

    /// Records that the session has taken (or skipped) every event of its room's turn so far.
    private func markTaken(_ session: Session, _ room: Room) {
        session.eventTurn = room.turn
        session.eventCursor = room.turnEvents.count
    }

    /// Moves the events the session owes into its outbox, one by one, so that
    /// whatever is queued next comes after them. Only needed when something
    /// else is queued for a watcher in the middle of a turn (a reply, leaving
    /// the room); `flush` normally hands the events out without this.
    func takeOwedEvents(_ session: Session) {
        guard let room = session.watchedRoom, let range = owedEvents(session) else { return }
        markTaken(session, room)
        var skipped = 0
        let firstUnsynced = room.firstUnsyncedEvent ?? Int.max
        for index in range
        where !queueEvent(session, room.turnEvents[index], unsyncedBatch: index >= firstUnsynced ? unsyncedBatch : 0) {
            skipped += 1
        }
        if skipped > 0 { noteEventsSkipped(skipped) }
    }

    /// The watcher is not keeping up: forget its queued events, queue no more,
    /// and owe it one STATE once its socket has drained. The dropped events
    /// no longer count as handed out (`events_out`).
    func dropEvents(_ session: Session, reason: @autoclosure () -> String = "") {
        let queued = session.outbox.count
        session.outbox.removeAll(where: \.isEvent)
        noteEventsSkipped(queued - session.outbox.count)
        session.outboxBytes = session.outbox.reduce(0) { $0 + $1.bytes.count }
        session.owesResync = true
        let why = reason()
        log.info("\(session.label) is a slow watcher (\(why.isEmpty ? "over \(config.limits.maxPendingBytes) bytes pending (--max-pending)" : why)); "
                 + "events dropped, resync owed")
    }

    func markDirty(_ session: Session) {
        guard !session.inDirtyList else { return }
        session.inDirtyList = true
        dirty.append(session)
    }

    /// A client that sends commands faster than it reads replies is not
    /// read from until its output drains: replies are never dropped, so this
    /// is what bounds memory for it.
    func applyBackpressure(_ session: Session) {
        if !session.readingPaused && session.pendingBytes > config.limits.maxPendingBytes {
            session.readingPaused = true
            session.connection.pauseReading()
        }
    }

    /// Runs once per loop turn, before the loop waits for IO: makes batched
    /// journal appends durable (or undoes them), then writes each dirty session's output as
    /// one batch.
    public func flush() {
        // Lines held while their session's output was over the bound run
        // first, so their answers leave in this turn.
        runLinesHeldForOutput()
        // The turn's changes become durable, or are undone, before any of
        // the turn's output leaves.
        store.endOfTurn()
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        let maxPending = config.limits.maxPendingBytes
        let maxOutput = config.limits.maxOutputMemoryBytes
        // Output the transports took on in this flush and could not send at once.
        var grown = 0
        // A session joined `backlogged`: its queue is not in the figure yet.
        var backlogGrew = false
        for session in batch {
            session.inDirtyList = false
            guard !session.isEnded else { continue }
            let queuedBefore = session.connection.queuedWriteBytes
            // The room's events of this turn that this watcher owes: sent with
            // its outbox, or skipped if it is closing, owed a resync, would
            // now hold more than --max-pending, or is already behind while
            // the output of all connections is past --max-output-memory.
            var owed: (room: Room, range: Range<Int>)?
            if let room = session.watchedRoom, let range = owedEvents(session) {
                markTaken(session, room)
                if session.isClosing || session.owesResync {
                    noteEventsSkipped(range.count)
                } else if session.outboxBytes + room.turnBytes(in: range) + queuedBefore > maxPending {
                    noteEventsSkipped(range.count)
                    dropEvents(session)
                } else if queuedBefore > 0 && heldOutputBytes > maxOutput
                            && (grown > maxOutput / Self.outputBudgetGrowthShare || queuedBefore >= session.queuedAfterLastFlush) {
                    // Behind while the output of all connections is past the
                    // bound, and either its socket has sent nothing since the
                    // last flush (stalled: what it holds is not coming back)
                    // or this flush already grew the queues by an eighth.
                    noteEventsSkipped(range.count)
                    dropEvents(session, reason: "behind while all connections hold over \(maxOutput) bytes (--max-output-memory)")
                } else {
                    owed = (room, range)
                }
            }
            if session.owesResync && session.watching && queuedBefore == 0 && session.endReason == nil {
                session.owesResync = false
                noteResync()
                session.outbox.append(Session.Output(bytes: Wire.state(currentState(of: session)), isEvent: false))
            }
            if let owed, session.outbox.isEmpty, owed.range.lowerBound == 0 {
                // The usual case: one shared buffer, the same for every watcher of the room.
                let events = owed.room.allTurnEvents()
                if queuedBefore == 0 && heldOutputBytes + events.count > maxOutput {
                    offerWithoutQueuing(events, of: owed.room, to: session)
                } else {
                    session.connection.write([events])
                }
            } else if !session.outbox.isEmpty || owed != nil {
                var chunks = session.outbox.map(\.bytes)
                if let owed { chunks += owed.room.turnEvents[owed.range] }
                session.connection.write(chunks)
                session.outbox.removeAll(keepingCapacity: true)
                session.outboxBytes = 0
            }
            let queuedAfter = session.connection.queuedWriteBytes
            session.queuedAfterLastFlush = queuedAfter
            heldOutputBytes += queuedAfter - queuedBefore
            grown += max(0, queuedAfter - queuedBefore)
            if !session.inBacklogList && queuedAfter > 0 {
                session.inBacklogList = true
                backlogGrew = true
                backlogged.append(session)
            }
            if session.endReason != nil {
                finishEnding(session, graceful: true)
            } else if session.readingPaused && !session.changes.pausedForStore && !session.linesHeldForOutput
                        && session.pendingBytes <= config.limits.maxPendingBytes / 2 {
                session.readingPaused = false
                session.connection.resumeReading()
            }
        }
        for room in roomsWithTurnEvents { room.endTurn() }
        roomsWithTurnEvents.removeAll(keepingCapacity: true)
        // The recount walks every session with a full socket: during a burst
        // to 10,000 watchers that is all of them, on every loop turn while
        // their sockets drain. Between flushes the held output only shrinks,
        // so the figure kept is an upper bound and needs no recount until
        // output grows again, a session joins the list, it is near the bound,
        // or a session in the list ended (the list must let go of it).
        if !backlogged.isEmpty && (grown > 0 || backlogGrew || heldOutputBytes > maxOutput / 2 || backlogHoldsEnded) {
            backlogHoldsEnded = false
            keepOutputWithinBudget()
        }
    }

    /// A watcher whose socket has taken everything so far, when queuing this
    /// turn's events for it could take the output of all connections past
    /// `--max-output-memory`: it gets what its socket takes at once; a line
    /// cut short is finished (it is queued: a line is never left half sent);
    /// the events after it are dropped and it is owed a resync, like a
    /// watcher already behind. So such a watcher adds at most one line to
    /// the output held, however many of them a turn reaches.
    private func offerWithoutQueuing(_ events: [UInt8], of room: Room, to session: Session) {
        let taken = session.connection.writeWithoutQueuing([events])
        guard taken < events.count else { return }
        var nextLine = taken
        if taken > 0 && events[taken - 1] != UInt8(ascii: "\n") {
            // Every event ends with a newline, so there is one after `taken`.
            nextLine = (events[taken...].firstIndex(of: UInt8(ascii: "\n")) ?? events.count - 1) + 1
            session.connection.write([Array(events[taken..<nextLine])])
        }
        noteEventsSkipped(room.turnEvents.count - room.turnEventIndex(startingAt: nextLine))
        dropEvents(session, reason: "its socket is full while all connections hold \(heldOutputBytes) bytes, "
                   + "near --max-output-memory \(config.limits.maxOutputMemoryBytes)")
    }

    /// Ends a session once its queued output has been flushed.
    func end(_ session: Session, _ reason: CloseReason) {
        guard session.endReason == nil else { return }
        // What was broadcast before the end is still sent; nothing after it.
        takeOwedEvents(session)
        session.endReason = reason
        markDirty(session)
    }

    func finishEnding(_ session: Session, graceful: Bool) {
        guard !session.isEnded else { return }
        session.isEnded = true
        if session.inBacklogList { backlogHoldsEnded = true }
        detach(session)
        let reason = session.endReason ?? .peerClosed
        if reason == .busy {
            log.debug("\(session.label) closed: \(reason)")
        } else {
            log.info("\(session.label) closed: \(reason)")
        }
        if graceful {
            session.connection.closeAfterSending()
        } else {
            session.connection.close()
        }
    }
}
