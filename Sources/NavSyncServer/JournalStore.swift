import NavSyncCore

/// The store of a single daemon: the hub's own view is the truth, and a
/// change is made durable in the journal file (or nowhere, with
/// `--state none`) before it is reported — all within `submit`, so a change
/// costs what it cost before the store existed.
///
/// Must be used on the loop thread only.
public final class JournalStore: RoomStore {
    public weak var delegate: RoomStoreDelegate?
    let journal: Journal?
    private let log: Logger

    /// - Parameter journal: nil keeps state in memory only.
    public init(journal: Journal?, log: Logger) {
        self.journal = journal
        self.log = log
    }

    public var unavailableReason: String? { nil }

    public var persistenceName: String { journal == nil ? "none" : "journal" }

    public var figures: [(key: String, value: String)] { [] }

    public func submit(_ change: ChangeRequest) {
        guard let delegate else { return }
        let rules = delegate.changeRules
        let held = delegate.storedState(of: change.room)
        let outcome = rules.evaluate(change.mutation, ifRevision: change.ifRevision, against: held ?? rules.initialState)
        guard case .applied(let changed) = outcome else {
            delegate.changeFinished(change, outcome)
            return
        }
        if held == nil && delegate.roomsWithStateCount >= rules.maxRooms {
            delegate.changeFinished(change, .refused(rules.roomLimitError))
            return
        }
        if let journal {
            do {
                try journal.record(room: change.room, state: changed)
            } catch {
                log.error("state file write failed, change to room \(change.room) refused: \(error)")
                delegate.changeFinished(change, .refused(ProtocolError(.internal, "could not write the state file; nothing was changed")))
                // A line whose fsync failed is still in the file: rewrite the
                // file from the unchanged rooms at once (and retried each turn).
                compactIfDue()
                return
            }
        }
        delegate.changeFinished(change, outcome)
    }

    public func endOfTurn() {
        if let journal {
            do {
                try journal.syncIfNeeded()
            } catch {
                log.error("fsync of the state file failed: \(error)")
            }
        }
        compactIfDue()
    }

    func compactIfDue() {
        guard let journal, journal.wantsCompaction, let delegate else { return }
        do {
            try journal.compact(rooms: delegate.roomStates)
        } catch {
            // The journal as it stands is still complete and valid; only its
            // size keeps growing until a later compaction succeeds.
            log.warn("state file compaction failed, will retry: \(error)")
        }
    }
}
