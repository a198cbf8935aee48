/// One session's output on its way to the transport, owned by `FanOut`:
/// what is queued this turn, whether the session is in the fan-out's dirty
/// and backlog lists, whether reading is paused for it, and whether it is
/// owed a resync. Every field changes through a method here, so the rules
/// that tie them (bytes always the sum of the queue; a drop of events
/// always owes a resync) hold in one place.
///
/// A value type held in place by `Session`: each step is a plain field
/// update on the flush path, with no allocation and no dispatch per watcher.
struct SessionOutput {
    struct Item {
        var bytes: [UInt8]
        /// Events may be dropped for a slow watcher; replies never are.
        var isEvent: Bool
        /// Non-zero for the `OK` of a change not yet fsynced, and for its
        /// event, if taken early: the batch (`UndurableChanges`) whose
        /// failed fsync turns the `OK` into `ERR internal` and drops the event.
        var unsyncedBatch: UInt64 = 0
    }

    /// Output queued during this loop turn, written as one batch by the flush.
    private(set) var queue: [Item] = []
    /// Bytes of `queue`.
    private(set) var queuedBytes = 0
    /// What the transport still held right after this session's last flush:
    /// a queue no smaller at the next one means its socket sent nothing since.
    private(set) var queuedAfterLastFlush = 0
    /// Events were dropped for this watcher; a fresh STATE is owed once its
    /// socket has drained.
    private(set) var owesResync = false
    /// Reading from its connection is paused until its output drains.
    private(set) var readingPaused = false
    /// In `FanOut.dirty`.
    private(set) var isDirty = false
    /// In `FanOut.backlogged`: the transport held unsent output after a flush.
    private(set) var isBacklogged = false

    mutating func append(_ bytes: [UInt8], isEvent: Bool, unsyncedBatch: UInt64 = 0) {
        queue.append(Item(bytes: bytes, isEvent: isEvent, unsyncedBatch: unsyncedBatch))
        queuedBytes += bytes.count
    }

    /// Hands the queue over for writing and empties it. Not keeping
    /// capacity: an empty queue is then the one shared empty array, so the
    /// next flush's `isEmpty` reads memory already in cache instead of a
    /// buffer per watcher (perf showed that miss as a third of the flush's
    /// own time).
    mutating func takeQueue() -> [Item] {
        let taken = queue
        queue = []
        queuedBytes = 0
        return taken
    }

    /// Forgets everything queued (the transport failed, or the session ends with nothing more to say).
    mutating func discard() {
        queue = []
        queuedBytes = 0
    }

    /// Drops the queued events (replies stay) and owes a resync; returns how many were dropped.
    mutating func dropEvents() -> Int {
        let before = queue.count
        queue.removeAll(where: \.isEvent)
        queuedBytes = queue.reduce(0) { $0 + $1.bytes.count }
        owesResync = true
        return before - queue.count
    }

    /// Owed a fresh STATE without a drop (its room was replaced).
    mutating func oweResync() { owesResync = true }

    /// The resync is sent, or no longer owed (a fresh snapshot answered it).
    mutating func settleResync() { owesResync = false }

    /// Whether anything queued belongs to the unsynced `batch`.
    func holds(batch: UInt64) -> Bool { queue.contains { $0.unsyncedBatch == batch } }

    /// The unsynced `batch` was undone: its `OK`s become `refusal`, its events go.
    mutating func takeBack(batch: UInt64, refusal: [UInt8]) {
        queue = queue.compactMap { item in
            guard item.unsyncedBatch == batch else { return item }
            return item.isEvent ? nil : Item(bytes: refusal, isEvent: false)
        }
        queuedBytes = queue.reduce(0) { $0 + $1.bytes.count }
    }

    /// Joins the dirty list; false when it was in it already.
    mutating func markDirty() -> Bool {
        guard !isDirty else { return false }
        isDirty = true
        return true
    }

    mutating func leftDirtyList() { isDirty = false }

    /// Joins the backlog list; false when it was in it already.
    mutating func joinBacklog() -> Bool {
        guard !isBacklogged else { return false }
        isBacklogged = true
        return true
    }

    mutating func leftBacklog() { isBacklogged = false }

    mutating func noteFlushed(transportHolds bytes: Int) { queuedAfterLastFlush = bytes }

    /// Pauses reading; false when it was paused already.
    mutating func pauseReading() -> Bool {
        guard !readingPaused else { return false }
        readingPaused = true
        return true
    }

    mutating func resumeReading() { readingPaused = false }
}
