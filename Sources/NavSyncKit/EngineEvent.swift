import NavSyncClient
import NavSyncCore

/// Names one mutation between the main actor and the loop thread.
typealias Ticket = Int

/// What the loop thread reports to the main actor, in the order it happened.
enum EngineEvent: Sendable, Equatable {
    case link(Link)
    /// A whole state: the first one on a connection, or a resync.
    case snapshot(RoomState, SnapshotCause)
    /// One change, with the state after it.
    case event(RoomState, op: String)
    case reply(Ticket, Reply)
    /// An `ERR` that answers no mutation: a refused greeting, `busy`,
    /// a revoked token or room.
    case serverError(ServerError)
    /// `WHOAMI`'s answer on a new connection; nil from a daemon before 1.2.
    case identity(Identity?)
    /// The room's members, the whole list after each change.
    case members([Member])
    /// The loop thread has closed everything and ended.
    case finished

    /// Events and snapshots: what the outbox may merge when the main actor falls behind.
    var state: RoomState? {
        switch self {
        case .snapshot(let state, _), .event(let state, _): return state
        default: return nil
        }
    }
}

/// The queue from the loop thread to the main actor. The loop appends as
/// things happen; the main actor takes everything at once. If the main actor
/// stops taking (blocked, or busy for a long time) while the room keeps
/// changing, the states waiting are merged into one resync snapshot of the
/// latest, so this queue never holds more than `stateLimit` states however
/// long the stall: the same promise the daemon makes a slow watcher.
struct EngineOutbox {
    static let stateLimit = 1024

    private(set) var events: [EngineEvent] = []
    private var states = 0
    /// True while a hop to the main actor is on its way; it will take what is here.
    private var deliveryScheduled = false

    /// Queues one event; returns true when the caller must schedule a delivery.
    mutating func append(_ event: EngineEvent) -> Bool {
        // Each member list is whole: one waiting is replaced by the newer one.
        if case .members = event, case .members? = events.last {
            events[events.count - 1] = event
            defer { deliveryScheduled = true }
            return !deliveryScheduled
        }
        events.append(event)
        if event.state != nil {
            states += 1
            if states > Self.stateLimit { mergeStates() }
        }
        defer { deliveryScheduled = true }
        return !deliveryScheduled
    }

    /// Everything queued, in order; the next `append` schedules a new delivery.
    mutating func takeAll() -> [EngineEvent] {
        defer {
            events.removeAll(keepingCapacity: false)
            states = 0
            deliveryScheduled = false
        }
        return events
    }

    /// Replaces every queued state by one resync of the latest. Replies keep
    /// their places: a mutation's reply waits for its revision, which the
    /// merged snapshot shows.
    private mutating func mergeStates() {
        guard let latest = events.last(where: { $0.state != nil })?.state else { return }
        events.removeAll { $0.state != nil }
        events.append(.snapshot(latest, .resync))
        states = 1
    }
}
