import NavSyncCore

/// One room: its state once it has been changed, and who is watching it.
final class Room {
    /// nil until the first change; until then the room reads as the catalog's
    /// initial stack at revision 0 and does not count against `--max-rooms`.
    var state: RoomState?
    /// Who is watching, in the order they started (a removal moves the last
    /// one into the gap). Broadcasting walks this list, so the sessions and
    /// their sockets are visited roughly in the order they were created,
    /// which keeps memory access sequential where a hash order scatters it.
    private(set) var watchers: [Session] = []

    /// The events of the current loop turn, in revision order, shared by
    /// every watcher: a watcher owes the ones after its cursor
    /// (`WatchCursor`). Broadcasting appends here once per event
    /// instead of once per watcher; `FanOut.flush` hands them out and ends
    /// the turn.
    private(set) var turnEvents: [[UInt8]] = []
    /// Bytes before each of `turnEvents`, and in all of them.
    private var turnOffsets: [Int] = []
    private(set) var turnBytes = 0
    /// All of `turnEvents` as one shared buffer, built on first use in a turn.
    private var joinedTurn: SharedBytes?
    /// Counts the turns in which this room had events; a cursor is valid only for the turn it was taken in.
    private(set) var turn: UInt64 = 1

    /// The latest changes as the encoded `EVENT` lines, for `WATCH <rev>`.
    var history: EventHistory

    init(state: RoomState? = nil, limits: Limits) {
        self.state = state
        self.history = EventHistory(maxCount: limits.historyCount, maxBytes: limits.historyBytes)
    }

    func addWatcher(_ session: Session) {
        session.cursor.placed(at: watchers.count)
        watchers.append(session)
    }

    func removeWatcher(_ session: Session) {
        let slot = session.cursor.slot
        guard slot >= 0, slot < watchers.count, watchers[slot] === session else { return }
        let last = watchers.removeLast()
        if slot < watchers.count {
            watchers[slot] = last
            last.cursor.placed(at: slot)
        }
        session.cursor.placed(at: -1)
    }

    func appendTurnEvent(_ event: [UInt8]) {
        turnOffsets.append(turnBytes)
        turnEvents.append(event)
        turnBytes += event.count
        joinedTurn = nil
    }

    /// Bytes of the turn's events in `range`.
    func turnBytes(in range: Range<Int>) -> Int {
        let end = range.upperBound == turnEvents.count ? turnBytes : turnOffsets[range.upperBound]
        return end - turnOffsets[range.lowerBound]
    }

    /// The index of the turn's event that starts at byte `offset` of
    /// `allTurnEvents()` (the count of events when `offset` is the end).
    func turnEventIndex(startingAt offset: Int) -> Int {
        var low = 0, high = turnOffsets.count
        while low < high {
            let middle = (low + high) / 2
            if turnOffsets[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Every event of the turn as one shared buffer, the same object for
    /// every watcher that takes the whole turn; queued writes that hold it
    /// are charged to `ledger` once.
    func allTurnEvents(ledger: SharedBytesLedger) -> SharedBytes {
        if let joinedTurn { return joinedTurn }
        let joined = SharedBytes(joining: turnEvents, ledger: ledger)
        joinedTurn = joined
        return joined
    }

    /// Where this turn's events from changes not yet fsynced start, nil when
    /// there are none (`--fsync batch`; see `UndurableChanges`).
    var firstUnsyncedEvent: Int?

    /// Takes back the turn's events from `count` on: their changes were
    /// undone. Watchers that had counted them as taken owe from `count`.
    func dropTurnEvents(from count: Int) {
        guard count < turnEvents.count else { return }
        turnEvents.removeSubrange(count...)
        turnOffsets.removeSubrange(count...)
        turnBytes = count == 0 ? 0 : turnOffsets[count - 1] + turnEvents[count - 1].count
        joinedTurn = nil
        for watcher in watchers { watcher.cursor.takeBack(to: count, inTurn: turn) }
    }

    /// Forgets the turn's events; every watcher's cursor becomes stale, which reads as "owes none yet".
    func endTurn() {
        turnEvents.removeAll(keepingCapacity: true)
        turnOffsets.removeAll(keepingCapacity: true)
        turnBytes = 0
        joinedTurn = nil
        firstUnsyncedEvent = nil
        turn &+= 1
    }

    /// A room that holds nothing worth keeping in memory.
    var isIdle: Bool { state == nil && watchers.isEmpty }
}
