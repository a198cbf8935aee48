/// Where a watcher is in its room: the room, its place in the room's list
/// of watchers, and how many of the room's events of the current turn it
/// has taken. The room places it (`Room.addWatcher`); the fan-out moves it
/// along as events are handed out.
///
/// A value type held in place by `Session`, read on every watcher's flush.
struct WatchCursor {
    /// The room this session watches, nil when not watching; kept so the
    /// event path needs no lookup by name.
    private(set) var room: Room?
    /// Its index in the room's `watchers`, -1 when it is not in the list.
    private(set) var slot = -1
    /// How many of `room`'s events of turn `turn` it has taken into its
    /// output (or skipped). Valid only while `turn` equals the room's turn;
    /// otherwise it has taken none.
    private(set) var taken = 0
    private(set) var turn: UInt64 = 0

    /// Follows `room` from now on: events already broadcast this turn are
    /// not for it (its STATE reply shows them).
    mutating func follow(_ room: Room) {
        self.room = room
        markTaken()
    }

    /// Follows no room.
    mutating func stop() { room = nil }

    /// The range of its room's current-turn events it still owes, if any.
    func owed() -> Range<Int>? {
        guard let room, !room.turnEvents.isEmpty else { return nil }
        let start = turn == room.turn ? taken : 0
        return start < room.turnEvents.count ? start..<room.turnEvents.count : nil
    }

    /// Every event of its room's turn so far is taken (or skipped).
    mutating func markTaken() {
        guard let room else { return }
        turn = room.turn
        taken = room.turnEvents.count
    }

    /// The room's turn lost its events from `count` on: taken no further than that.
    mutating func takeBack(to count: Int, inTurn roomTurn: UInt64) {
        if turn == roomTurn && taken > count { taken = count }
    }

    mutating func placed(at slot: Int) { self.slot = slot }
}
