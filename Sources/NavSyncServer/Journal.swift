import Foundation
import NavSyncCore

/// Durable record of every room's stack and revision.
///
/// The file is JSON Lines: a snapshot line holding all rooms, then one line
/// per acknowledged change. Appending one short line per change keeps the
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
    public func record(room: String, state: RoomState) throws {
        guard !holdsRefusedLine else { throw RefusedLineInFile() }
        let line = try Self.encoder.encode(ChangeLine(room: room, rev: state.revision, route: state.route))
        var bytes = [UInt8](line)
        bytes.append(UInt8(ascii: "\n"))
        try storage.append(bytes)
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

    /// Called once per loop turn: fsyncs batched appends.
    public func syncIfNeeded() throws {
        guard unsynced else { return }
        unsynced = false
        try storage.sync()
    }

    public var wantsCompaction: Bool {
        if holdsRefusedLine { return true }
        let tail = storage.size - snapshotBytes
        return tail > Self.compactionTailBytes && tail > 2 * snapshotBytes
    }

    public func compact(rooms: [String: RoomState]) throws {
        let bytes = try Self.snapshot(rooms)
        try storage.replace(with: bytes)
        snapshotBytes = bytes.count
        unsynced = false
        holdsRefusedLine = false
    }

    struct RefusedLineInFile: Error, CustomStringConvertible {
        var description: String { "the state file still holds a refused change; it must be rewritten first" }
    }

    // MARK: - The file format

    struct RoomLine: Codable, Equatable {
        var rev: UInt64
        var route: String
    }

    struct SnapshotLine: Codable {
        /// Format version, so a future layout is refused rather than misread.
        var navsync: Int
        var rooms: [String: RoomLine]
    }

    struct ChangeLine: Codable {
        var room: String
        var rev: UInt64
        var route: String
    }

    static let formatVersion = 1

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    static func snapshot(_ rooms: [String: RoomState]) throws -> [UInt8] {
        let line = SnapshotLine(navsync: formatVersion,
                                rooms: rooms.mapValues { RoomLine(rev: $0.revision, route: $0.route) })
        var bytes = [UInt8](try encoder.encode(line))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Reads a journal file's bytes back into rooms. A line that is not
    /// understood anywhere is corruption and is reported with its line number;
    /// only an unterminated last line is forgiven, because it can only be a
    /// write that never completed and so was never acknowledged.
    public static func load(_ bytes: [UInt8]) throws(JournalError) -> (rooms: [String: RoomState], droppedTornTail: Bool) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var torn = false
        if let last = lines.last {
            if last.isEmpty {
                lines.removeLast()
            } else {
                // No newline after the last line: a torn write.
                lines.removeLast()
                torn = true
            }
        }
        // Snapshots are written whole (temp file + rename), so only a change
        // line can be torn; a file without one complete snapshot is corrupt.
        guard let first = lines.first else {
            throw JournalError(line: 1, problem: "no complete snapshot line")
        }
        let decoder = JSONDecoder()
        var rooms: [String: RoomState] = [:]
        do {
            let snapshot = try decoder.decode(SnapshotLine.self, from: Data(first))
            guard snapshot.navsync == formatVersion else {
                throw JournalError(line: 1, problem: "format version \(snapshot.navsync) is not supported (expected \(formatVersion))")
            }
            for (name, room) in snapshot.rooms {
                rooms[name] = try roomState(name: name, rev: room.rev, route: room.route, line: 1)
            }
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError(line: 1, problem: "not a navsync snapshot line")
        }
        for (offset, raw) in lines.dropFirst().enumerated() {
            let number = offset + 2
            guard let change = try? decoder.decode(ChangeLine.self, from: Data(raw)) else {
                throw JournalError(line: number, problem: "not a navsync change line")
            }
            let previous = rooms[change.room]?.revision ?? 0
            guard change.rev == previous + 1 else {
                throw JournalError(line: number, problem: "room \(change.room) jumps from revision \(previous) to \(change.rev)")
            }
            rooms[change.room] = try roomState(name: change.room, rev: change.rev, route: change.route, line: number)
        }
        return (rooms, torn)
    }

    private static func roomState(name: String, rev: UInt64, route: String, line: Int) throws(JournalError) -> RoomState {
        guard Names.isValid(name) else { throw JournalError(line: line, problem: "\"\(name)\" is not a valid room name") }
        guard rev > 0 else { throw JournalError(line: line, problem: "room \(name) has revision 0 but is stored as changed") }
        switch Route.decode(route) {
        case .success(let stack):
            return RoomState(stack: stack, revision: rev)
        case .failure(let error):
            throw JournalError(line: line, problem: "room \(name) has a bad route \"\(route)\": \(error)")
        }
    }
}

/// A state file that cannot be trusted; the daemon refuses to start on it.
public struct JournalError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var problem: String

    public var description: String { "line \(line): \(problem)" }
}
