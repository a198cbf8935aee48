import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Reading a state file back: what is accepted, what is corruption, and where.
final class JournalLoadTests: XCTestCase {
    private let snapshot = #"{"navsync":1,"rooms":{"main":{"rev":2,"route":"/green/blue:hi%20there"}}}"#

    private func load(_ lines: [String], terminated: Bool = true) throws(JournalError) -> JournalFile.Loaded {
        var text = lines.joined(separator: "\n")
        if terminated { text += "\n" }
        return try JournalFile.load(Array(text.utf8))
    }

    /// The error `load` throws for these lines; fails the test if it loads.
    private func failure(_ lines: [String], terminated: Bool = true,
                         file: StaticString = #filePath, line: UInt = #line) -> JournalError? {
        do {
            let loaded = try load(lines, terminated: terminated)
            XCTFail("expected corruption, loaded \(loaded.rooms)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func test_load_roundTripsWhatTheJournalWrote() throws {
        let storage = MemoryStorage()
        let start = ["main": RoomState(stack: stack("/red"), revision: 7),
                     "x.y-Z_9": RoomState(stack: stack("/blue:%E2%9C%93"), revision: 1)]
        let journal = try Journal(storage: storage, policy: .always, rooms: start)
        try journal.record(room: "main", state: RoomState(stack: stack("/red/green"), revision: 8), op: "push")
        try journal.record(room: "new", state: RoomState(stack: [RouteEntry(screen: "blue", data: "a b\nc/d:e%")], revision: 1), op: "open")
        try journal.record(room: "main", state: RoomState(stack: stack("/blue"), revision: 9), op: "select")
        XCTAssertEqual(storage.lines.count, 4)

        let loaded = try JournalFile.load(storage.bytes!)
        XCTAssertFalse(loaded.droppedTornTail)
        XCTAssertEqual(loaded.rooms, [
            "main": RoomState(stack: stack("/blue"), revision: 9),
            "x.y-Z_9": RoomState(stack: [RouteEntry(screen: "blue", data: "\u{2713}")], revision: 1),
            "new": RoomState(stack: [RouteEntry(screen: "blue", data: "a b\nc/d:e%")], revision: 1),
        ])
        XCTAssertEqual(loaded.recent, [
            "main": [.init(op: "push", state: RoomState(stack: stack("/red/green"), revision: 8)),
                     .init(op: "select", state: RoomState(stack: stack("/blue"), revision: 9))],
            "new": [.init(op: "open", state: RoomState(stack: [RouteEntry(screen: "blue", data: "a b\nc/d:e%")], revision: 1))],
        ], "the tail, with its ops, for the resume history")
    }

    func test_load_recentChanges_lineWithoutAnOpCutsOffWhatCameBefore_unknownOpIsCorruption() throws {
        let loaded = try load([
            #"{"navsync":2,"rooms":{}}"#,
            #"{"op":"select","rev":1,"room":"main","route":"/green"}"#,
            #"{"rev":2,"room":"main","route":"/green/blue"}"#,
            #"{"op":"present","rev":3,"room":"main","route":"/green/blue#red"}"#,
            #"{"op":"push","rev":1,"room":"b","route":"/red/red"}"#,
        ])
        XCTAssertEqual(loaded.recent, [
            "main": [.init(op: "present", state: RoomState(Navigation(stack: stack("/green/blue"), sheets: [RouteEntry(screen: "red")]), revision: 3))],
            "b": [.init(op: "push", state: RoomState(stack: stack("/red/red"), revision: 1))],
        ], "a line written before 1.1 leaves only what follows it replayable")
        let error = failure([
            #"{"navsync":2,"rooms":{}}"#,
            #"{"op":"push x","rev":1,"room":"main","route":"/green"}"#,
        ])
        XCTAssertEqual(error?.line, 2)
        XCTAssertEqual(error?.problem, "room main has an unknown op \"push x\"")
    }

    func test_load_emptySnapshotAndChanges() throws {
        let loaded = try load([
            #"{"navsync":1,"rooms":{}}"#,
            #"{"rev":1,"room":"main","route":"/green"}"#,
            #"{"rev":2,"room":"main","route":"/green/blue"}"#,
        ])
        XCTAssertEqual(loaded.rooms, ["main": RoomState(stack: stack("/green/blue"), revision: 2)])
    }

    func test_load_corruptMiddleLineIsReportedWithItsNumber() {
        let error = failure([
            snapshot,
            #"{"rev":3,"room":"main","route":"/red"}"#,
            #"{"rev":4,"room":"main","rou"#,
            #"{"rev":4,"room":"main","route":"/green"}"#,
        ])
        XCTAssertEqual(error?.line, 3)
        XCTAssertEqual(error?.description.hasPrefix("line 3: "), true)
    }

    func test_load_blankMiddleLineIsCorrupt() {
        XCTAssertEqual(failure([snapshot, "", #"{"rev":3,"room":"main","route":"/red"}"#])?.line, 2)
    }

    func test_load_revisionGapIsCorrupt() {
        let error = failure([snapshot, #"{"rev":4,"room":"main","route":"/red"}"#])
        XCTAssertEqual(error?.line, 2)
        XCTAssertEqual(error?.problem.contains("from revision 2 to 4"), true, error?.problem ?? "")
        XCTAssertEqual(failure([snapshot, #"{"rev":2,"room":"main","route":"/red"}"#])?.line, 2, "a repeated revision is a gap too")
        XCTAssertEqual(failure([snapshot, #"{"rev":2,"room":"other","route":"/red"}"#])?.line, 2, "a new room starts at 1")
    }

    func test_load_roomAtTheLargestRevision_loads_aLineAfterItIsCorrupt() throws {
        let top = #"{"navsync":2,"rooms":{"main":{"rev":18446744073709551615,"route":"/red"}}}"#
        XCTAssertEqual(try load([top]).rooms["main"]?.revision, .max)
        let error = failure([top, #"{"rev":0,"room":"main","route":"/green","op":"select"}"#])
        XCTAssertEqual(error?.line, 2)
        XCTAssertEqual(failure([top, #"{"rev":18446744073709551615,"room":"main","route":"/green","op":"select"}"#])?.line, 2)
        let below = #"{"navsync":2,"rooms":{"main":{"rev":18446744073709551614,"route":"/red"}}}"#
        let reached = try load([below, #"{"rev":18446744073709551615,"room":"main","route":"/green","op":"select"}"#])
        XCTAssertEqual(reached.rooms["main"]?.revision, .max)
        XCTAssertEqual(reached.recent["main"]?.count, 1)
        XCTAssertNotNil(failure([#"{"navsync":2,"rooms":{"main":{"rev":18446744073709551616,"route":"/red"}}}"#]),
                        "a revision past 64 bits is not a revision")
    }

    func test_load_badRouteIsCorrupt() {
        XCTAssertEqual(failure([snapshot, #"{"rev":3,"room":"main","route":"red"}"#])?.line, 2)
        XCTAssertEqual(failure([snapshot, #"{"rev":3,"room":"main","route":"/red/blue:%ZZ"}"#])?.line, 2)
        XCTAssertEqual(failure([snapshot, #"{"rev":3,"room":"main","route":"/"}"#])?.line, 2)
        XCTAssertEqual(failure([#"{"navsync":1,"rooms":{"main":{"rev":2,"route":"/a//b"}}}"#])?.line, 1)
    }

    func test_load_invalidRoomNameIsCorrupt() {
        XCTAssertEqual(failure([snapshot, #"{"rev":1,"room":"no spaces","route":"/red"}"#])?.line, 2)
        XCTAssertEqual(failure([snapshot, #"{"rev":1,"room":"","route":"/red"}"#])?.line, 2)
        XCTAssertEqual(failure([#"{"navsync":1,"rooms":{"a/b":{"rev":1,"route":"/red"}}}"#])?.line, 1)
        let long = String(repeating: "r", count: 65)
        XCTAssertEqual(failure([#"{"navsync":1,"rooms":{"\#(long)":{"rev":1,"route":"/red"}}}"#])?.line, 1)
    }

    func test_load_revisionZeroInSnapshotIsCorrupt() {
        XCTAssertEqual(failure([#"{"navsync":1,"rooms":{"main":{"rev":0,"route":"/red"}}}"#])?.line, 1)
    }

    func test_load_wrongFormatVersionIsRefused() {
        let error = failure([#"{"navsync":3,"rooms":{}}"#])
        XCTAssertEqual(error?.line, 1)
        XCTAssertEqual(error?.problem.contains("format version 3"), true, error?.problem ?? "")
        XCTAssertEqual(failure([#"{"navsync":0,"rooms":{}}"#])?.line, 1)
        XCTAssertEqual(failure([#"{"rooms":{}}"#])?.line, 1)
        XCTAssertEqual(failure(["hello"])?.line, 1)
    }

    func test_load_changeLineWhereSnapshotBelongsIsCorrupt() {
        XCTAssertEqual(failure([#"{"rev":1,"room":"main","route":"/red"}"#])?.line, 1)
    }

    func test_load_forgivesUnterminatedLastLine() throws {
        let loaded = try load([snapshot, #"{"rev":3,"room":"main","route":"/red"}"#, #"{"rev":4,"room":"ma"#], terminated: false)
        XCTAssertTrue(loaded.droppedTornTail)
        XCTAssertEqual(loaded.rooms["main"], RoomState(stack: stack("/red"), revision: 3))

        // Even a complete-looking line is dropped without its newline: it was never acknowledged.
        let whole = try load([snapshot, #"{"rev":3,"room":"main","route":"/red"}"#], terminated: false)
        XCTAssertTrue(whole.droppedTornTail)
        XCTAssertEqual(whole.rooms["main"]?.revision, 2)
    }

    func test_load_refusesFileWithoutCompleteSnapshot() {
        XCTAssertEqual(failure([snapshot], terminated: false)?.line, 1)
        XCTAssertEqual(failure([#"{"navsync":1,"ro"#], terminated: false)?.line, 1)
        XCTAssertEqual(failure([], terminated: false)?.line, 1)
        XCTAssertEqual(failure([""], terminated: true)?.line, 1)
    }

    func test_load_journalErrorDescription() {
        XCTAssertEqual(JournalError(line: 12, problem: "bad").description, "line 12: bad")
    }

    // MARK: - Sheets

    func test_load_versionOneFile_loadsWithNoSheets() throws {
        let loaded = try load([snapshot, #"{"rev":3,"room":"main","route":"/green"}"#])
        XCTAssertEqual(loaded.rooms["main"], RoomState(stack: stack("/green"), revision: 3))
        XCTAssertEqual(loaded.rooms["main"]?.sheets, [])
    }

    func test_load_versionTwoFile_keepsSheets() throws {
        let loaded = try load([#"{"navsync":2,"rooms":{"main":{"rev":2,"route":"/red#blue:a%20note"}}}"#,
                               #"{"rev":3,"room":"main","route":"/red#blue:a%20note#green"}"#])
        XCTAssertEqual(loaded.rooms["main"], RoomState(navigation("/red#blue:a%20note#green"), revision: 3))
        XCTAssertEqual(failure([#"{"navsync":2,"rooms":{"main":{"rev":2,"route":"/red#"}}}"#])?.line, 1)
    }

    func test_snapshot_withSheets_roundTripsAsVersionTwo() throws {
        let rooms = ["main": RoomState(navigation("/red/green#blue:%23x#red"), revision: 9),
                     "other": RoomState(stack: stack("/blue"), revision: 1)]
        let bytes = try JournalFile.snapshot(rooms)
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"navsync":2,"#))
        XCTAssertEqual(try JournalFile.load(bytes).rooms, rooms)
    }
}
