import NavSyncCore

/// Where rooms' changes are decided and kept: the journal file of one daemon
/// (`JournalStore`), or Redis shared by a fleet (the backplane). The hub hands
/// the store each validated change and replies when the store says how it
/// ended; it broadcasts when the store reports a change, whoever made it.
///
/// All methods must be called on the loop thread.
public protocol RoomStore: AnyObject {
    /// Set once by the hub before any other call.
    var delegate: RoomStoreDelegate? { get set }

    /// Why rooms cannot be read or changed right now (`ERR unavailable`);
    /// nil while the store is reachable. A store that is always at hand
    /// returns nil.
    var unavailableReason: String? { get }

    /// Why one room cannot be read right now (`ERR unavailable` for `GET`,
    /// `WATCH` and `JOIN` to it); nil when it can. Beyond the whole store
    /// being away, a shared store may have set one room aside whose keys do
    /// not decode; asking may make it look at that room again, so a repaired
    /// room answers again by itself.
    func unavailableReason(forRoom room: String) -> String?

    /// Decides one change. Must call `delegate.changeFinished` exactly once
    /// for it, before returning or later. An applied change is reported by
    /// that call alone, never also by `roomChanged`.
    func submit(_ change: ChangeRequest)

    /// Whether the hub may submit the same session's next change while
    /// `change` (submitted, not yet finished) is still in flight. A store
    /// that says yes must finish one session's *applied* changes in the
    /// order they were submitted (other outcomes may come early: the hub
    /// holds them back until the earlier ones are answered).
    func mayPipeline(after change: ChangeRequest) -> Bool

    /// Once per loop turn, before output is written (batched fsync).
    func endOfTurn()

    /// For `STATS`: `journal`, `none`, `redis`.
    var persistenceName: String { get }

    /// The store's own rows of the table of figures (`STATS` and `/metrics`).
    var figures: [Figure] { get }

    /// True while changes reported as applied are not yet durable (a
    /// batched fsync is still to come); until then they may be taken back.
    var holdsUndurableChanges: Bool { get }

    /// Makes the changes reported so far durable now, before an answer that
    /// shows state. Tells the delegate how it ended
    /// (`undurableChangesSettled`); returns false when they were taken back.
    func makeChangesDurable() -> Bool

    /// Put before each session number to make the member id: what
    /// tells this daemon's members from those of the rest of a fleet
    /// (empty for a daemon of its own).
    var memberIDPrefix: String { get }

    /// A member of this daemon arrived in `room` or changed: a
    /// backplane tells the fleet; a daemon of its own has nobody to tell.
    func memberChanged(_ member: Member, in room: String)

    /// A member of this daemon left `room`.
    func memberGone(_ id: String, from room: String)

    /// Whether this daemon's copy of a room may trail the store's truth
    /// (the copy of a fleet's shared store follows the fleet's changes a
    /// moment later). Then `catchUp` is asked before a resume from a
    /// revision past the copy is answered.
    var copyMayTrail: Bool { get }

    /// Brings this daemon's copy of `room` up to `revision`, or as far as
    /// the store itself goes when it holds less, then calls `done` exactly
    /// once on the loop thread (possibly before returning): with nil once
    /// the copy is as current as the store can make it, or with why it
    /// could not be (the store went away meanwhile). The caller asks
    /// `unavailableReason(forRoom:)` again either way.
    func catchUp(_ room: String, to revision: UInt64, then done: @escaping (_ failure: String?) -> Void)
}

extension RoomStore {
    /// A store whose changes are durable when reported holds none back.
    public var holdsUndurableChanges: Bool { false }
    /// A store that says nothing takes one change per session at a time.
    public func mayPipeline(after change: ChangeRequest) -> Bool { false }
    public func makeChangesDurable() -> Bool { true }
    public var memberIDPrefix: String { "" }
    public func memberChanged(_ member: Member, in room: String) {}
    public func memberGone(_ id: String, from room: String) {}
    /// A store whose copy is the truth never trails it.
    public var copyMayTrail: Bool { false }
    public func catchUp(_ room: String, to revision: UInt64, then done: @escaping (String?) -> Void) { done(nil) }
}

/// One change, checked as far as the line and the catalog allow.
public struct ChangeRequest {
    public let room: String
    public let mutation: Mutation
    public let ifRevision: UInt64?
    /// Who asked; the store hands it back in `changeFinished`.
    public let session: Session
    /// The session's count of changes before this one: answers go out in this order.
    let ticket: UInt64
}

/// How a change ended.
public enum ChangeOutcome: Equatable {
    /// Applied as this new state, one revision past the hub's view: the reply
    /// is `OK <rev>`, then every watcher gets the event.
    case applied(RoomState)
    /// It would leave the room as it is: nothing stored, `OK <current rev>`.
    case unchanged(revision: UInt64)
    /// Refused; nothing was changed.
    case refused(ProtocolError)
}

/// What a store tells the hub. Implemented by `Server`.
/// All methods must be called on the loop thread.
public protocol RoomStoreDelegate: AnyObject {
    /// The hub's view of a room: its state, nil while never changed.
    func storedState(of room: String) -> RoomState?
    /// Rooms holding state, as the hub counts them.
    var roomsWithStateCount: Int { get }
    /// The hub's current rules for changes.
    var changeRules: ChangeRules { get }
    /// Every room with state, for compaction and tests.
    var roomStates: [String: RoomState] { get }

    /// The end of one submitted change: replies to its session and, when
    /// applied, moves the room and broadcasts.
    func changeFinished(_ change: ChangeRequest, _ outcome: ChangeOutcome)
    /// A room moved to `state`, one revision past the hub's view, by a change
    /// not submitted here (another daemon's); every watcher gets the event.
    func roomChanged(_ room: String, to state: RoomState, op: String)
    /// A room's state is known again only as a whole (events were lost or
    /// the store started over): watchers are sent a fresh `STATE`.
    func roomReplaced(_ room: String, with state: RoomState?)
    /// The fleet's catalog changed (backplane): checked and adopted.
    func catalogChanged(to catalog: Catalog)
    /// The changes applied while `holdsUndurableChanges` was true are now
    /// durable, or (`durable` false) could not be made so and must be taken
    /// back: rooms, events and figures as before them, their `OK`s turned
    /// into `ERR internal`.
    func undurableChangesSettled(durable: Bool)

    /// A member of another daemon arrived in `room` or changed.
    func memberChangedElsewhere(_ member: Member, in room: String)
    /// A member of another daemon left `room`.
    func memberGoneElsewhere(_ id: String, from room: String)
    /// The fleet's members of `room` as read again from the store
    /// (after a reconnect): whoever is not in `members` is gone, whoever is
    /// not listed yet arrived; nothing is sent for it yet.
    func membersReplaced(in room: String, with members: [Member])
    /// The rooms whose members are held.
    var roomsWithMembers: [String] { get }
    /// After the members were read again: every presence follower is
    /// sent its room's listing.
    func relistPresence()
}

extension RoomStoreDelegate {
    public func memberChangedElsewhere(_ member: Member, in room: String) {}
    public func memberGoneElsewhere(_ id: String, from room: String) {}
    public func membersReplaced(in room: String, with members: [Member]) {}
    public var roomsWithMembers: [String] { [] }
    public func relistPresence() {}
}

/// The parts of a change that do not depend on where it is stored:
/// the `IF` comparison and the reducer against a given state.
public struct ChangeRules: Sendable {
    public var catalog: Catalog
    public var maxDepth: Int
    public var maxRooms: Int

    public init(catalog: Catalog, maxDepth: Int, maxRooms: Int) {
        self.catalog = catalog
        self.maxDepth = maxDepth
        self.maxRooms = maxRooms
    }

    /// The state a room reads as before its first change.
    public var initialState: RoomState { RoomState(stack: catalog.initialStack, revision: 0) }

    /// Judges `mutation` (guarded by `ifRevision`) against `base`, in the
    /// order PROTOCOL.md gives: conflict, then the reducer's own refusals.
    /// `.applied` here means "would be applied as"; storing is the store's job.
    public func evaluate(_ mutation: Mutation, ifRevision: UInt64?, against base: RoomState) -> ChangeOutcome {
        if let ifRevision, ifRevision != base.revision {
            return .refused(ProtocolError(.conflict, "current=\(base.revision)"))
        }
        do {
            guard let changed = try Reducer.apply(mutation, to: base, catalog: catalog, maxDepth: maxDepth) else {
                return .unchanged(revision: base.revision)
            }
            return .applied(changed)
        } catch {
            return .refused(error)
        }
    }

    public var roomLimitError: ProtocolError {
        ProtocolError(.limit, "\(maxRooms) rooms already hold state (--max-rooms)")
    }
}

extension RoomStore {
    /// A store whose rooms are all readable or none is: the store's reason.
    public func unavailableReason(forRoom room: String) -> String? { unavailableReason }
}
