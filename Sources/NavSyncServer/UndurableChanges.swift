import NavSyncCore

/// `--fsync batch` acknowledges a change after its write(2) and fsyncs once
/// per loop turn, before any of the turn's output leaves. Until that fsync
/// the turn's changes are provisional: their `OK`s and events wait in the
/// outputs, tagged with the batch, and a failed fsync undoes them (state,
/// events, figures) and turns each `OK` into `ERR internal`, like Redis
/// refusing writes after a failed save. Anything else that shows a room's
/// state (GET, WATCH, STATS, a conflict...) first has the store make the
/// changes before it durable, so no client is told of a revision that is
/// then taken back.
///
/// This type keeps what the undo needs and does it: rooms through the
/// registry, outputs and `events_out` through `FanOut.takeBack`.
/// Must be used on the loop thread only.
final class UndurableChanges {
    /// A change applied and reported by the store before it was durable:
    /// what to put back if the fsync fails.
    private struct Change {
        var roomName: String
        var room: Room
        /// The room's state before this change; nil when the change created it.
        var previous: RoomState?
    }

    private let rooms: RoomRegistry
    private let fanOut: FanOut
    private var changes: [Change] = []
    /// `events_out` and the changes made before the batch.
    private var figuresBefore: (eventsOut: UInt64, changes: UInt64) = (0, 0)

    init(rooms: RoomRegistry, fanOut: FanOut) {
        self.rooms = rooms
        self.fanOut = fanOut
    }

    /// Records a change about to be applied whose fsync is still to come
    /// (`changesBefore`: the server's count of changes without it); returns
    /// the tag for its `OK`.
    func note(roomName: String, previous: RoomState?, changesBefore: UInt64) -> UInt64 {
        if changes.isEmpty {
            figuresBefore = (fanOut.eventsOut, changesBefore)
        }
        let room = rooms.room(named: roomName)
        changes.append(Change(roomName: roomName, room: room, previous: previous))
        if room.firstUnsyncedEvent == nil { room.firstUnsyncedEvent = room.turnEvents.count }
        return fanOut.unsyncedBatch
    }

    /// The batch is durable, or (`durable` false) was undone. Returns the
    /// count of changes to go back to when it was undone, nil otherwise.
    func settle(durable: Bool) -> UInt64? {
        var changesBefore: UInt64?
        if !durable && !changes.isEmpty {
            undo()
            changesBefore = figuresBefore.changes
        }
        for change in changes { change.room.firstUnsyncedEvent = nil }
        changes.removeAll(keepingCapacity: true)
        fanOut.beginNextUnsyncedBatch()
        return changesBefore
    }

    private func undo() {
        for change in changes.reversed() {
            rooms.setState(change.previous, of: change.room)
        }
        for change in changes {
            if let first = change.room.firstUnsyncedEvent {
                change.room.dropTurnEvents(from: first)
                change.room.firstUnsyncedEvent = nil
            }
            // Its newest events are of undone revisions; a `WATCH <rev>` is
            // answered with a fresh STATE until new changes refill it.
            change.room.history.removeAll()
        }
        let refusal = Wire.error(ProtocolError(.internal, "could not make the state file durable; nothing was changed"))
        fanOut.takeBack(batch: fanOut.unsyncedBatch, refusal: refusal, eventsOutBefore: figuresBefore.eventsOut)
        for change in changes { rooms.dropIfIdle(change.roomName) }
    }
}
