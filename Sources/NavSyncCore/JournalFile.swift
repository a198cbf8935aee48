import Foundation

/// The state file's format, JSON Lines: one snapshot line holding every room,
/// then one line per acknowledged change. Pure bytes in and out; writing
/// them durably is the server's `Journal`.
public enum JournalFile {
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
        /// The change's `EVENT` op, so the tail can be replayed to a resuming
        /// watcher after a restart. Absent in lines written before 1.1 (and
        /// ignored by readers that predate it, so the format version stays).
        var op: String?
    }

    /// One change of the file's tail, as a watcher would have seen it.
    public struct RecentChange: Equatable, Sendable {
        public var op: String
        public var state: RoomState

        public init(op: String, state: RoomState) {
            self.op = op
            self.state = state
        }
    }

    /// What a file holds: every room, and each room's changes since the
    /// snapshot line, oldest first, for rebuilding the resume history.
    public struct Loaded: Equatable, Sendable {
        public var rooms: [String: RoomState]
        /// Only an unbroken run that ends at the room's revision: a line
        /// without an op (written before 1.1) cuts off what came before it.
        public var recent: [String: [RecentChange]]
        /// The file ended in a line without its newline, which was ignored.
        public var droppedTornTail: Bool

        /// Nothing: no file yet, or an empty one.
        public static let nothing = Loaded(rooms: [:], recent: [:], droppedTornTail: false)
    }

    private static let knownOps = Set(Verb.mutations.map(\.op))

    /// 2 since routes may carry sheets; version 1 files, written
    /// before sheets existed, hold only plain stacks and load as they are.
    static let formatVersion = 2
    static let readableVersions: ClosedRange<Int> = 1...2

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// The first line of a fresh file: every room, newline-terminated.
    public static func snapshot(_ rooms: [String: RoomState]) throws -> [UInt8] {
        let line = SnapshotLine(navsync: formatVersion,
                                rooms: rooms.mapValues { RoomLine(rev: $0.revision, route: $0.route) })
        var bytes = [UInt8](try encoder.encode(line))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// One change, newline-terminated, to append after the snapshot; `op` is
    /// the `EVENT` op it was broadcast with.
    public static func change(room: String, state: RoomState, op: String) throws -> [UInt8] {
        var bytes = [UInt8](try encoder.encode(ChangeLine(room: room, rev: state.revision, route: state.route, op: op)))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Reads a journal file's bytes back into rooms. A line that is not
    /// understood anywhere is corruption and is reported with its line number;
    /// only an unterminated last line is forgiven, because it can only be a
    /// write that never completed and so was never acknowledged.
    public static func load(_ bytes: [UInt8]) throws(JournalError) -> Loaded {
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
            guard readableVersions.contains(snapshot.navsync) else {
                throw JournalError(line: 1, problem: "format version \(snapshot.navsync) is not supported (expected \(readableVersions.lowerBound) to \(readableVersions.upperBound))")
            }
            for (name, room) in snapshot.rooms {
                rooms[name] = try roomState(name: name, rev: room.rev, route: room.route, line: 1)
            }
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError(line: 1, problem: "not a navsync snapshot line")
        }
        var recent: [String: [RecentChange]] = [:]
        for (offset, raw) in lines.dropFirst().enumerated() {
            let number = offset + 2
            guard let change = try? decoder.decode(ChangeLine.self, from: Data(raw)) else {
                throw JournalError(line: number, problem: "not a navsync change line")
            }
            let previous = rooms[change.room]?.revision ?? 0
            // A room already at the largest revision has no next one: any
            // line after it is as wrong as a jump.
            guard previous < UInt64.max, change.rev == previous + 1 else {
                throw JournalError(line: number, problem: "room \(change.room) jumps from revision \(previous) to \(change.rev)")
            }
            let state = try roomState(name: change.room, rev: change.rev, route: change.route, line: number)
            rooms[change.room] = state
            if let op = change.op {
                guard knownOps.contains(op) else {
                    throw JournalError(line: number, problem: "room \(change.room) has an unknown op \"\(op)\"")
                }
                recent[change.room, default: []].append(RecentChange(op: op, state: state))
            } else {
                recent[change.room] = nil
            }
        }
        return Loaded(rooms: rooms, recent: recent, droppedTornTail: torn)
    }

    private static func roomState(name: String, rev: UInt64, route: String, line: Int) throws(JournalError) -> RoomState {
        guard Names.isValid(name) else { throw JournalError(line: line, problem: "\"\(name)\" is not a valid room name") }
        guard rev > 0 else { throw JournalError(line: line, problem: "room \(name) has revision 0 but is stored as changed") }
        switch Route.decode(route) {
        case .success(let navigation):
            return RoomState(navigation, revision: rev)
        case .failure(let error):
            throw JournalError(line: line, problem: "room \(name) has a bad route \"\(route)\": \(error)")
        }
    }
}

/// A state file that cannot be trusted; the daemon refuses to start on it.
public struct JournalError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var problem: String

    public init(line: Int, problem: String) {
        self.line = line
        self.problem = problem
    }

    public var description: String { "line \(line): \(problem)" }
}
