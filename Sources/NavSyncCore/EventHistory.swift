/// A room's most recent events, kept as the encoded lines already sent
/// to watchers, so `WATCH <rev>` can replay what a client missed without
/// encoding anything again. Bounded twice: at most `maxCount` events, and at
/// most `maxBytes` of them (a few huge routes reach the byte bound first);
/// the oldest go first. The events held are always the consecutive
/// revisions up to `newestRevision`.
public struct EventHistory: Sendable {
    public let maxCount: Int
    public let maxBytes: Int
    /// A ring: `slots[(head + i) % slots.count]` is the i-th oldest event held.
    private var slots: [[UInt8]] = []
    private var head = 0
    public private(set) var count = 0
    /// Bytes of the events held.
    public private(set) var bytes = 0
    /// The revision of the newest event held (meaningless while `count` is 0).
    public private(set) var newestRevision: UInt64 = 0

    public init(maxCount: Int, maxBytes: Int) {
        precondition(maxCount >= 1 && maxBytes >= 1)
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    /// The oldest revision held, nil when nothing is.
    public var oldestRevision: UInt64? { count == 0 ? nil : newestRevision - UInt64(count) + 1 }

    /// Records the event that made `revision`. A revision that does not follow
    /// the newest held (the first change after a restart) starts the history afresh.
    public mutating func append(_ event: [UInt8], revision: UInt64) {
        if count > 0 && revision != newestRevision &+ 1 { removeAll() }
        newestRevision = revision
        guard event.count <= maxBytes else {
            // Too big to keep at all; what came before it is no longer consecutive.
            removeAll()
            return
        }
        while count > 0 && (count == maxCount || bytes + event.count > maxBytes) { dropOldest() }
        if count == slots.count {
            // Every slot is in use and there is room to grow: straighten the
            // ring so the new slot at the end comes after the newest.
            if head != 0 {
                slots = Array(slots[head...] + slots[..<head])
                head = 0
            }
            slots.append(event)
        } else {
            slots[(head + count) % slots.count] = event
        }
        count += 1
        bytes += event.count
    }

    /// The events after `revision`, oldest first, when every one of them up to
    /// `current` (the room's revision) is held; nil when they are not and the
    /// client must be resynchronised. Empty when `revision` is `current`.
    public func events(after revision: UInt64, current: UInt64) -> [[UInt8]]? {
        guard revision <= current else { return nil }
        if revision == current { return [] }
        guard let oldest = oldestRevision, newestRevision == current, revision >= oldest - 1 else { return nil }
        let skip = Int(revision - (oldest - 1))
        return (skip..<count).map { slots[(head + $0) % slots.count] }
    }

    private mutating func dropOldest() {
        bytes -= slots[head].count
        slots[head] = []
        head = (head + 1) % slots.count
        count -= 1
    }

    /// Forgets every event: the room's state was replaced by other means
    /// and the changes in between are not known.
    public mutating func removeAll() {
        slots.removeAll()
        head = 0
        count = 0
        bytes = 0
    }
}
