import NavSyncCore
import NavSyncServer
import UVLoop

/// Opens `--state FILE` at start: finds (or, for the default path, creates)
/// its directory, loads what it holds, refuses a file it cannot trust, and
/// leaves a fresh snapshot behind.
enum StateFile {
    static func open(path: String, createMissingDirectory: Bool, policy: Journal.SyncPolicy,
                     log: Logger) throws(DaemonStartError) -> (Journal, JournalFile.Loaded) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if !directory.isEmpty && directory != "." {
            if createMissingDirectory {
                do {
                    try SyncFile.createDirectories(directory)
                } catch {
                    throw DaemonStartError("state file \(path): cannot create directory \(directory): \(error)")
                }
            } else {
                try requireDirectory(directory, of: path)
            }
        }
        let storage = FileJournalStorage(path: path)
        var loaded = JournalFile.Loaded.nothing
        let bytes: [UInt8]?
        do {
            bytes = try storage.readAll()
        } catch {
            throw DaemonStartError("state file \(path) is unreadable (\(error)); refusing to start")
        }
        if let bytes, bytes.isEmpty {
            // An empty file holds no state, as a missing one does (touch, or a
            // disk that filled before the first write); nothing can be lost by
            // starting fresh.
            log.info("state file \(path) is empty; starting fresh")
        } else if let bytes {
            do {
                loaded = try JournalFile.load(bytes)
                if loaded.droppedTornTail {
                    log.warn("state file \(path): ignored an unfinished last record (a write cut off before it was acknowledged)")
                }
            } catch {
                throw DaemonStartError(
                    "state file \(path) is corrupt (\(error)); refusing to start. Move it aside to start with a fresh state.")
            }
            let replayable = loaded.recent.values.reduce(0) { $0 + $1.count }
            log.info("state file \(path): \(loaded.rooms.count) rooms loaded, \(replayable) recent changes kept for resuming watchers")
        } else {
            log.info("state file \(path) does not exist yet; starting fresh")
        }
        do {
            return (try Journal(storage: storage, policy: policy, rooms: loaded.rooms), loaded)
        } catch {
            throw DaemonStartError("state file \(path): cannot write: \(error)")
        }
    }

    /// A `--state` given by hand must sit in a directory that exists: making
    /// one would hide a mistyped path behind a fresh, empty state.
    private static func requireDirectory(_ directory: String, of path: String) throws(DaemonStartError) {
        let found: SyncFile.DirectoryCheck
        do {
            found = try SyncFile.checkDirectory(directory)
        } catch {
            throw DaemonStartError("state file \(path): cannot look at directory \(directory): \(error)")
        }
        switch found {
        case .directory:
            return
        case .missing:
            throw DaemonStartError("state file \(path): directory \(directory) does not exist; "
                                   + "create it or correct --state (only the default location is created)")
        case .notADirectory:
            throw DaemonStartError("state file \(path): \(directory) is not a directory")
        }
    }
}
