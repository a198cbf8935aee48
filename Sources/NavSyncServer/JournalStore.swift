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

    public var figures: [Figure] { [] }

    public func submit(_ change: ChangeRequest) {
        guard let delegate else { return }
        if let journal, journal.isRefusingChanges {
            // After a failed fsync a change may go ahead only once the file
            // has been rewritten and fsynced, which is tried again here.
            compactIfDue()
        }
        let rules = delegate.changeRules
        let held = delegate.storedState(of: change.room)
        let outcome = rules.evaluate(change.mutation, ifRevision: change.ifRevision, against: held ?? rules.initialState)
        let overRoomLimit = held == nil && delegate.roomsWithStateCount >= rules.maxRooms
        // Every answer but a new change shows the room's state, which must
        // be durable first; if it was not, judge again on what is.
        if case .applied = outcome, !overRoomLimit {} else if holdsUndurableChanges {
            _ = makeChangesDurable()
            return submit(change)
        }
        guard case .applied(let changed) = outcome else {
            delegate.changeFinished(change, outcome)
            return
        }
        if overRoomLimit {
            delegate.changeFinished(change, .refused(rules.roomLimitError))
            return
        }
        if let journal {
            do {
                try journal.record(room: change.room, state: changed, op: change.mutation.op)
            } catch {
                log.error("state file write or fsync failed, change to room \(change.room) refused: \(error)")
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
        _ = makeChangesDurable()
        compactIfDue()
    }

    /// With `--fsync batch`: changes appended (write(2) done) whose fsync is
    /// still to come, at the latest at the end of the loop turn.
    public var holdsUndurableChanges: Bool { journal?.hasUnsyncedChanges ?? false }

    public func makeChangesDurable() -> Bool {
        guard let journal, journal.hasUnsyncedChanges else { return true }
        do {
            try journal.syncIfNeeded()
        } catch {
            log.error("fsync of the state file failed; the changes not yet durable are undone and answered "
                      + "ERR internal, and changes are refused until the file is rewritten: \(error)")
            delegate?.undurableChangesSettled(durable: false)
            return false
        }
        delegate?.undurableChangesSettled(durable: true)
        return true
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
