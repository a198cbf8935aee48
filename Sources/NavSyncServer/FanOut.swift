import NavSyncCore

/// The fan-out scheduler: per-session output queues, the slow-watcher
/// policy, the output budget (FanOut+OutputBudget), and the once-per-turn
/// flush that turns a turn's output into one write per connection. An event
/// is encoded once and queued once per room; each watcher of the room is
/// handed the same buffer at the flush.
///
/// It knows sessions, rooms and connections, not commands: the server queues
/// replies and events here, and is asked back (`currentState`,
/// `finishEnding`) only for a resync's snapshot and a session that ends.
/// A `final class` with stored fields read directly: the flush walks every
/// dirty watcher (10,000 in a burst), with no dispatch per watcher.
/// Must be used on the loop thread only.
final class FanOut {
    let limits: Limits
    let log: Logger

    /// Sessions with output to write, or events of their room to take, at the next flush.
    var dirty: [Session] = []
    /// Rooms whose `turnEvents` are not empty; their turn ends in `flush`.
    var roomsWithTurnEvents: [Room] = []
    /// Sessions whose transport held unsent output after a flush: where the
    /// output memory is (see FanOut+OutputBudget).
    var backlogged: [Session] = []
    /// A session in `backlogged` has ended since the last recount.
    var backlogHoldsEnded = false
    /// Output the transports hold for each session alone (their own
    /// copies and write requests, and the sessions' outboxes), as of the
    /// last flush (kept up to date during a flush; drains between flushes
    /// are seen at the next count).
    var heldOwnBytes = 0
    /// The turn buffers that queued writes hold, each charged once however
    /// many watchers' writes point into it; always up to date.
    let sharedLedger = SharedBytesLedger()
    /// Output held for all sessions together, counted as memory: what is
    /// compared with `--max-output-memory`.
    var heldOutputBytes: Int { heldOwnBytes + sharedLedger.heldBytes }

    // Figures for STATS.
    var eventsOut: UInt64 = 0
    var resyncs: UInt64 = 0

    /// Tags the outputs of the current unsynced batch (`--fsync batch`, see
    /// `UndurableChanges`); moves on when it is settled.
    private(set) var unsyncedBatch: UInt64 = 1

    /// The snapshot a watcher owed a resync is sent: its room's state now.
    /// Set once by the owner, before the first flush.
    var currentState: ((Session) -> RoomState)!
    /// A session whose output has been handed over and that is ending: the
    /// owner detaches and closes it. Set once by the owner, before the first flush.
    var finishEnding: ((Session) -> Void)!

    init(limits: Limits, log: Logger) {
        self.limits = limits
        self.log = log
    }

    /// Encode once, queue once: the event joins the room's list for this
    /// turn, and `flush` hands the turn's events to each watcher as one
    /// shared buffer. Watchers are marked dirty on the room's first event
    /// of the turn only, so the cost per watcher does not grow with the
    /// number of events in a turn.
    func broadcast(_ event: [UInt8], to room: Room) {
        guard !room.watchers.isEmpty else { return }
        if room.turnEvents.isEmpty {
            roomsWithTurnEvents.append(room)
            for watcher in room.watchers { markDirty(watcher) }
        }
        room.appendTurnEvent(event)
        // Counted here for every watcher; events a watcher ends up skipping are taken back off.
        eventsOut += UInt64(room.watchers.count)
    }

    /// The session has become one of `room`'s watchers.
    func follow(_ session: Session, _ room: Room) {
        // Events already broadcast this turn are not for it: its STATE reply shows them.
        session.cursor.follow(room)
        markDirty(session)
    }

    /// The session stops watching: events broadcast before are still its
    /// to receive (taken now), nothing after, and no resync is owed.
    func unfollow(_ session: Session) {
        takeOwedEvents(session)
        session.output.settleResync()
        session.cursor.stop()
    }

    /// A fresh snapshot answers the watcher (a repeated WATCH, a JOIN to
    /// its own room): any resync it was owed is settled.
    func resyncAnswered(_ session: Session) { session.output.settleResync() }

    /// The watcher's room was replaced: events broadcast before stay
    /// before it, and it is owed a fresh STATE instead of any after.
    func oweResync(_ session: Session) {
        takeOwedEvents(session)
        session.output.oweResync()
        markDirty(session)
    }

    /// Forgets a session's queued output: its transport failed, or it ends
    /// with nothing more to say.
    func discard(_ session: Session) { session.output.discard() }

    func noteEventsSkipped(_ count: Int) { eventsOut -= UInt64(count) }

    func noteEventsReplayed(_ count: Int) { eventsOut += UInt64(count) }

    func noteResync() { resyncs += 1 }

    /// - Parameter unsyncedBatch: non-zero for the `OK` of a change not yet fsynced.
    func reply(_ session: Session, _ bytes: [UInt8], unsyncedBatch: UInt64 = 0) {
        guard !session.isEnded else { return }
        // Events broadcast before this reply go out before it.
        takeOwedEvents(session)
        session.output.append(bytes, isEvent: false, unsyncedBatch: unsyncedBatch)
        markDirty(session)
    }

    /// Queues one event for a watcher. The bytes are shared with every other
    /// watcher of the room; nothing is copied here. Returns false when the
    /// watcher does not take it (closing, or owed a resync).
    @discardableResult
    func queueEvent(_ session: Session, _ bytes: [UInt8], unsyncedBatch: UInt64 = 0) -> Bool {
        guard !session.isClosing, !session.output.owesResync else { return false }
        session.output.append(bytes, isEvent: true, unsyncedBatch: unsyncedBatch)
        markDirty(session)
        if session.pendingBytes > limits.maxPendingBytes {
            dropEvents(session)
        }
        return true
    }


    /// Skips the events of this turn the session has not taken yet: they
    /// came after its last answer, and it is leaving.
    func skipOwedEvents(_ session: Session) {
        guard let range = session.cursor.owed() else { return }
        session.cursor.markTaken()
        noteEventsSkipped(range.count)
    }

    /// Moves the events the session owes into its outbox, one by one, so that
    /// whatever is queued next comes after them. Only needed when something
    /// else is queued for a watcher in the middle of a turn (a reply, leaving
    /// the room); `flush` normally hands the events out without this.
    func takeOwedEvents(_ session: Session) {
        guard let room = session.cursor.room, let range = session.cursor.owed() else { return }
        session.cursor.markTaken()
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
        noteEventsSkipped(session.output.dropEvents())
        // Its presence lines went with its events: a listing is owed too.
        if session.presence.follows { session.presence.owesListing = true }
        let why = reason()
        log.info("\(session.label) is a slow watcher (\(why.isEmpty ? "over \(limits.maxPendingBytes) bytes pending (--max-pending)" : why)); "
                 + "events dropped, resync owed")
    }

    func markDirty(_ session: Session) {
        guard session.output.markDirty() else { return }
        dirty.append(session)
    }

    /// A client that sends commands faster than it reads replies is not
    /// read from until its output drains: replies are never dropped, so this
    /// is what bounds memory for it.
    func applyBackpressure(_ session: Session) {
        if !session.output.readingPaused && session.pendingBytes > limits.maxPendingBytes && session.output.pauseReading() {
            session.connection.pauseReading()
        }
    }

    /// The other half of `applyBackpressure`: reading resumes once the
    /// output has drained to half the bound, unless lines still wait for
    /// the store or for the output (they resume it themselves).
    func resumeReadingIfDrained(_ session: Session) {
        guard session.output.readingPaused, !session.changes.pausedForStore, !session.linesHeldForOutput,
              session.pendingBytes <= limits.maxPendingBytes / 2 else { return }
        session.output.resumeReading()
        session.connection.resumeReading()
    }

    /// Writes each dirty session's output as one batch, with the events of
    /// its room's turn it owes; then ends the turn of every room that had
    /// events, and keeps the output of all connections within its budget.
    /// Runs once per loop turn from `Server.flush`, after the turn's changes
    /// became durable (or were undone).
    func flush() {
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        let maxPending = limits.maxPendingBytes
        let maxOutput = limits.maxOutputMemoryBytes
        // Output the transports took on in this flush and could not send
        // at once: their own memory, plus shared buffers newly held.
        var grownOwn = 0
        let sharedAtStart = sharedLedger.heldBytes
        // A session joined `backlogged`: its queue is not in the figure yet.
        var backlogGrew = false
        for session in batch {
            session.output.leftDirtyList()
            guard !session.isEnded else { continue }
            let queuedBefore = session.connection.queuedWriteBytes
            let ownBefore = queuedBefore == 0 ? 0 : session.connection.queuedOwnMemory
            // Behind while the output of all connections is past the bound,
            // and either its socket has sent nothing since the last flush
            // (stalled: what it holds is not coming back) or this flush
            // already grew the queues by an eighth.
            let isBehindOverBudget = queuedBefore > 0 && heldOutputBytes > maxOutput
                && (grownOwn + max(0, sharedLedger.heldBytes - sharedAtStart) > maxOutput / Self.outputBudgetGrowthShare
                    || queuedBefore >= session.output.queuedAfterLastFlush)
            let owedPresence = session.presence.follows
                ? takeOwedPresence(session, queuedBefore: queuedBefore, isBehindOverBudget: isBehindOverBudget) : nil
            // The room's events of this turn that this watcher owes: sent with
            // its outbox, or skipped if it is closing, owed a resync, would
            // now hold more than --max-pending, or is behind while the output
            // of all connections is past --max-output-memory.
            var owed: (room: Room, range: Range<Int>)?
            if let room = session.cursor.room, let range = session.cursor.owed() {
                session.cursor.markTaken()
                if session.isClosing || session.output.owesResync {
                    noteEventsSkipped(range.count)
                } else if session.output.queuedBytes + room.turnBytes(in: range) + queuedBefore > maxPending {
                    noteEventsSkipped(range.count)
                    dropEvents(session)
                } else if isBehindOverBudget {
                    noteEventsSkipped(range.count)
                    dropEvents(session, reason: "behind while all connections hold over \(maxOutput) bytes (--max-output-memory)")
                } else {
                    owed = (room, range)
                }
            }
            if session.output.owesResync && session.watching && queuedBefore == 0 && session.endReason == nil {
                session.output.settleResync()
                noteResync()
                session.output.append(Wire.state(currentState(session)), isEvent: false)
            }
            if session.presence.owesListing { sendOwedListing(session, queuedBefore: queuedBefore) }
            if let owed, session.output.queue.isEmpty, owed.range.lowerBound == 0 {
                // The usual case: one shared buffer, the same object for every
                // watcher of the room; a transport that cannot send it at once
                // keeps a reference to it rather than a copy.
                let events = owed.room.allTurnEvents(ledger: sharedLedger)
                if queuedBefore == 0 && heldOutputBytes + events.count > maxOutput {
                    offerWithoutQueuing(events, of: owed.room, to: session)
                } else {
                    session.connection.write(shared: events)
                }
            } else if !session.output.queue.isEmpty || owed != nil {
                var chunks = session.output.takeQueue().map(\.bytes)
                if let owed { chunks += owed.room.turnEvents[owed.range] }
                session.connection.write(chunks)
            }
            // Dropped meanwhile when its events were: they go together.
            if let owedPresence, !session.presence.owesListing { writePresence(owedPresence, to: session) }
            let queuedAfter = session.connection.queuedWriteBytes
            let ownAfter = queuedAfter == 0 ? 0 : session.connection.queuedOwnMemory
            session.output.noteFlushed(transportHolds: queuedAfter)
            heldOwnBytes += ownAfter - ownBefore
            grownOwn += max(0, ownAfter - ownBefore)
            if queuedAfter > 0 && session.output.joinBacklog() {
                backlogGrew = true
                backlogged.append(session)
            }
            if session.endReason != nil {
                finishEnding(session)
            } else {
                resumeReadingIfDrained(session)
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
        if !backlogged.isEmpty && (grownOwn > 0 || sharedLedger.heldBytes > sharedAtStart || backlogGrew || heldOutputBytes > maxOutput / 2 || backlogHoldsEnded) {
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
    private func offerWithoutQueuing(_ events: SharedBytes, of room: Room, to session: Session) {
        guard let untaken = offerLinesWithoutQueuing(events, to: session) else { return }
        noteEventsSkipped(room.turnEvents.count - room.turnEventIndex(startingAt: untaken))
        dropEvents(session, reason: "its socket is full while all connections hold \(heldOutputBytes) bytes, "
                   + "near --max-output-memory \(limits.maxOutputMemoryBytes)")
    }

    /// Hands the socket what it takes of `lines` at once, finishing a line
    /// it cut short (queued: a line is never left half sent). Returns where
    /// the lines it did not take start, nil when it took them all.
    func offerLinesWithoutQueuing(_ lines: SharedBytes, to session: Session) -> Int? {
        let taken = session.connection.writeWithoutQueuing(shared: lines)
        guard taken < lines.count else { return nil }
        var nextLine = taken
        if taken > 0 && lines[taken - 1] != UInt8(ascii: "\n") {
            // Every line ends with a newline, so there is one after `taken`.
            let bytes = lines.bytes
            nextLine = (bytes[taken...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.count - 1) + 1
            session.connection.write([Array(bytes[taken..<nextLine])])
        }
        return nextLine
    }

    // MARK: - `--fsync batch`

    /// The unsynced batch was undone (its fsync failed): every output of it
    /// is still queued, since nothing leaves before the fsync; its `OK`s
    /// become `refusal`, its events go, and `events_out` is as before it.
    func takeBack(batch: UInt64, refusal: [UInt8], eventsOutBefore: UInt64) {
        for session in dirty where session.output.holds(batch: batch) {
            session.output.takeBack(batch: batch, refusal: refusal)
        }
        eventsOut = eventsOutBefore
    }

    /// The unsynced batch is settled: later outputs carry the next tag.
    func beginNextUnsyncedBatch() { unsyncedBatch &+= 1 }

    /// Ends a session once its queued output has been flushed.
    func end(_ session: Session, _ reason: CloseReason) {
        guard session.endReason == nil else { return }
        // What was broadcast before the end is still sent; nothing after it.
        takeOwedEvents(session)
        session.endReason = reason
        markDirty(session)
    }
}
