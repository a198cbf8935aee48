import Foundation
import NavSyncKit
import XCTest

/// NavSyncKit against the built daemon: two objects in this process and a
/// plain TCP writer in one room, through every verb.
@MainActor
final class SharedNavigationTests: XCTestCase {
    func test_twoObjectsAndALineWriter_stayEqualThroughEveryVerb() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let first = SharedNavigation<NavEntry>(connect: address, room: "kit")
        let second = SharedNavigation<NavEntry>(connect: address, room: "kit")
        try await first.start()
        try await second.start()
        XCTAssertEqual(first.connection, .connected)
        XCTAssertEqual(first.stack, [NavEntry("red")])
        XCTAssertEqual(first.revision, 0)
        let log = ChangeLog(second.changes)

        let writer = try daemon.connect()
        defer { writer.close() }
        XCTAssertEqual(try writer.request("JOIN kit"), "STATE 0 /red")

        /// Waits until both objects show what the daemon holds, and checks they match it.
        func agree(_ step: String, file: StaticString = #filePath, line: UInt = #line) async throws {
            let state = try writer.request("GET")
            let parts = state.split(separator: " ")
            let revision = UInt64(parts[1])!
            await eventually("both objects at \(state) after \(step)", file: file, line: line) {
                first.revision == revision && second.revision == revision
            }
            XCTAssertEqual("STATE \(first.revision) \(route(of: first))", state, step, file: file, line: line)
            XCTAssertEqual(route(of: first), route(of: second), step, file: file, line: line)
        }

        var expected = 0
        try await first.select(NavEntry("green")); expected += 1
        XCTAssertEqual(first.stack, [NavEntry("green")], "a mutation returns once the object shows it")
        try await agree("select")
        try await second.push(NavEntry("blue", data: "  hello world  ")); expected += 1
        XCTAssertEqual(second.stack.last, NavEntry("blue", data: "hello world"))
        try await agree("push")
        XCTAssertEqual(try writer.request("PUSH red"), "OK 3"); expected += 1
        try await agree("netcat push")
        try await first.pop(); expected += 1
        try await agree("pop")
        try await second.root(); expected += 1
        try await agree("root")
        try await first.next(data: nil); expected += 1
        XCTAssertEqual(first.stack, [NavEntry("blue")])
        try await agree("next")
        try await second.open(stack: [NavEntry("red"), NavEntry("green"), NavEntry("blue", data: "a/b:c%d")]); expected += 1
        try await agree("open")
        XCTAssertEqual(try writer.request("NEXT"), "OK 8"); expected += 1
        try await agree("netcat next")
        let revision = try await first.ifAt(first.revision, .push(NavEntry("green"))); expected += 1
        XCTAssertEqual(revision, 9)
        try await agree("ifAt push")
        try await second.present(NavEntry("red")); expected += 1
        XCTAssertEqual(second.sheets, [NavEntry("red")])
        try await agree("present")
        XCTAssertEqual(try writer.request("PRESENT blue a note"), "OK 11"); expected += 1
        try await agree("netcat present")
        XCTAssertEqual(first.sheets, [NavEntry("red"), NavEntry("blue", data: "a note")])
        try await first.push(NavEntry("red")); expected += 1
        XCTAssertEqual(first.sheets.count, 2, "push changes the stack under the sheets")
        try await agree("push under sheets")
        try await first.dismiss(); expected += 1
        try await agree("dismiss")
        try await second.open(stack: [NavEntry("green")], sheets: [NavEntry("blue", data: "#1 of 2"), NavEntry("red")]); expected += 1
        try await agree("open with sheets")
        XCTAssertEqual(try writer.request("DISMISS"), "OK 15"); expected += 1
        try await agree("netcat dismiss")
        XCTAssertEqual(try writer.request("SELECT red"), "OK 16"); expected += 1
        XCTAssertEqual(first.sheets, [NavEntry("blue", data: "#1 of 2")], "the writer's select is not shown before its event")
        try await agree("netcat select")
        XCTAssertEqual(first.sheets, [], "select leaves no sheet")

        await eventually("every change in the second object's stream") { log.changes.count == expected }
        XCTAssertEqual(log.revisions, Array(1...UInt64(expected)))
        XCTAssertEqual(log.changes.map(\.op), [.select, .push, .push, .pop, .root, .next, .open, .next, .push,
                                               .present, .present, .push, .dismiss, .open, .dismiss, .select])
        XCTAssertEqual(log.changes.last?.stack, [NavEntry("red")])
        do {
            try await first.dismiss()
            XCTFail("dismiss with no sheet")
        } catch {
            XCTAssertEqual(error as? NavSyncError, .server(code: "no-sheet", message: "no sheet is presented"))
        }

        await first.stop()
        await second.stop()
        await eventually("the stream finishes on stop") { log.finished }
        XCTAssertEqual(first.connection, .stopped)
    }

    func test_ifAt_staleRevision_throwsConflictWithTheCurrentRevision() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)")
        try await navigation.start()
        defer { Task { await navigation.stop() } }
        try await navigation.select(NavEntry("green"))
        try await navigation.select(NavEntry("blue"))
        do {
            try await navigation.ifAt(1, .select(NavEntry("red")))
            XCTFail("a stale ifAt must throw")
        } catch let error as NavSyncError {
            XCTAssertEqual(error, .server(code: "conflict", message: "current=2"))
        }
        XCTAssertEqual(navigation.stack, [NavEntry("blue")])
        XCTAssertEqual(navigation.revision, 2)
    }
}
