import NavSyncCore

/// Durable record of every room's stack and revision.
///
/// The file (`JournalFile`) is a snapshot line holding all rooms, then one
/// line per acknowledged change. Appending one short line per change keeps the
/// acknowledgement path to a single write(2); when the appended tail grows
/// past its budget the file is rewritten as a fresh snapshot (temp + rename),
/// so a crash at any point leaves either the old or the new file.
public final class Journal {
    public enum SyncPolicy: String, Sendable, CaseIterable {
        /// fsync before every acknowledgement.
        case always
        /// write(2) before every acknowledgement, fsync at most once per loop turn.
        case batch
    }

    /// Compaction happens when the appended tail passes this many bytes and
    /// also twice the snapshot's size, so a big snapshot is not rewritten
    /// for every few changes.
    public static let compactionTailBytes = 1 << 20

    private let storage: JournalStorage
    private let policy: SyncPolicy
    private var snapshotBytes = 0
    private var unsynced = false
    /// A change line was appended but its fsync failed, so the change was
    /// refused while its line stays in the file. Nothing may be appended
    /// after it (the next change would repeat its revision) until a
    /// compaction rewrites the file without it.
    private var holdsRefusedLine = false

    /// Creates the journal over storage whose contents have been loaded.
    /// Writes a fresh snapshot at once, which proves the file is writable
    /// before the daemon accepts anyone.
    public init(storage: JournalStorage, policy: SyncPolicy, rooms: [String: RoomState]) throws {
        self.storage = storage
        self.policy = policy
        try compact(rooms: rooms)
    }

    /// Makes one change durable before it is acknowledged. On failure the
    /// caller must not apply the change. If its line reached the file anyway
    /// (the fsync failed), `wantsCompaction` turns true and every further
    /// change is refused until `compact` has rewritten the file without it.
    public func record(room: String, state: RoomState, op: String) throws {
        guard !holdsRefusedLine else { throw RefusedLineInFile() }
        try storage.append(try JournalFile.change(room: room, state: state, op: op))
        if policy == .always {
            do {
                try storage.sync()
            } catch {
                holdsRefusedLine = true
                throw error
            }
        } else {
            unsynced = true
        }
    }

    /// True when changes were appended (`batch`) and not yet fsynced.
    public var hasUnsyncedChanges: Bool { unsynced }

    /// True after a failed fsync, until `compact` has rewritten the file:
    /// every change is refused meanwhile.
    public var isRefusingChanges: Bool { holdsRefusedLine }

    /// Fsyncs batched appends (once per loop turn, or before a reply that
    /// shows state). When the fsync fails the caller must undo those
    /// changes: their lines stay in the file, so from here on every change
    /// is refused until `compact` has rewritten the file without them. The
    /// disk's failure may also have cost pages written earlier, so only a
    /// rewrite from memory, fsynced, is trusted again.
    public func syncIfNeeded() throws {
        guard unsynced else { return }
        unsynced = false
        do {
            try storage.sync()
        } catch {
            holdsRefusedLine = true
            throw error
        }
    }

    public var wantsCompaction: Bool {
        if holdsRefusedLine { return true }
        let tail = storage.size - snapshotBytes
        return tail > Self.compactionTailBytes && tail > 2 * snapshotBytes
    }

    public func compact(rooms: [String: RoomState]) throws {
        let bytes = try JournalFile.snapshot(rooms)
        try storage.replace(with: bytes)
        snapshotBytes = bytes.count
        unsynced = false
        holdsRefusedLine = false
    }

    struct RefusedLineInFile: Error, CustomStringConvertible {
        var description: String { "the state file still holds a refused change; it must be rewritten first" }
    }
}
