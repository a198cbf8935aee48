import NavSyncCore

/// A change applied and reported by the store before it was durable (the
/// journal's `--fsync batch` fsyncs once per loop turn): what to put back if
/// that fsync fails.
struct UnsyncedChange {
    var roomName: String
    var room: Room
    /// The room's state before this change; nil when the change created it.
    var previous: RoomState?
}

/// `--fsync batch` acknowledges a change after its write(2) and fsyncs once
/// per loop turn, before any of the turn's output leaves. Until that fsync
/// the turn's changes are provisional: their `OK`s and events wait in the
/// outboxes, tagged with the batch, and a failed fsync undoes them (state,
/// events, figures) and turns each `OK` into `ERR internal`, like Redis
/// refusing writes after a failed save. Anything else that shows a room's
/// state (GET, WATCH, STATS, a conflict...) first has the store make the
/// changes before it durable, so no client is told of a revision that is
/// then taken back.
extension Server {
    /// Records a change about to be applied whose fsync is still to come;
    /// returns the tag for its `OK`.
    func noteUndurable(roomName: String, previous: RoomState?) -> UInt64 {
        if unsyncedChanges.isEmpty {
            figuresBeforeUnsynced = (fanOut.eventsOut, changesMade - 1)
        }
        let room = rooms.room(named: roomName)
        unsyncedChanges.append(UnsyncedChange(roomName: roomName, room: room, previous: previous))
        if room.firstUnsyncedEvent == nil { room.firstUnsyncedEvent = room.turnEvents.count }
        return fanOut.unsyncedBatch
    }

    public func undurableChangesSettled(durable: Bool) {
        if !durable { undoUnsyncedChanges() }
        for change in unsyncedChanges { change.room.firstUnsyncedEvent = nil }
        unsyncedChanges.removeAll(keepingCapacity: true)
        fanOut.unsyncedBatch &+= 1
    }

    private func undoUnsyncedChanges() {
        for change in unsyncedChanges.reversed() {
            rooms.setState(change.previous, of: change.room)
        }
        for change in unsyncedChanges {
            if let first = change.room.firstUnsyncedEvent {
                change.room.dropTurnEvents(from: first)
                change.room.firstUnsyncedEvent = nil
            }
            // Its newest events are of undone revisions; a `WATCH <rev>` is
            // answered with a fresh STATE until new changes refill it.
            change.room.history.removeAll()
        }
        // Every output of the batch is still queued: nothing leaves before
        // the fsync. Its OKs become refusals; its events go.
        let refusal = Wire.error(ProtocolError(.internal, "could not make the state file durable; nothing was changed"))
        for session in fanOut.dirty where session.outbox.contains(where: { $0.unsyncedBatch == fanOut.unsyncedBatch }) {
            session.outbox = session.outbox.compactMap { output in
                guard output.unsyncedBatch == fanOut.unsyncedBatch else { return output }
                return output.isEvent ? nil : Session.Output(bytes: refusal, isEvent: false)
            }
            session.outboxBytes = session.outbox.reduce(0) { $0 + $1.bytes.count }
        }
        (fanOut.eventsOut, changesMade) = figuresBeforeUnsynced
        for change in unsyncedChanges { rooms.dropIfIdle(change.roomName) }
    }
}
