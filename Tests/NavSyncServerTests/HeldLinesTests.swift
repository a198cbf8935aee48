import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Lines are not run past the output they make: once a session's queued
/// output passes --max-pending, what it sent waits unrun until it drains.
final class HeldLinesTests: XCTestCase {
    private let room = "big"

    /// A room whose GET answer is about `bytes` long.
    private func bigRoom(_ hub: Hub, bytes: Int) -> Int {
        let writer = hub.connect()
        writer.run("JOIN \(room)")
        let data = String(repeating: "x", count: 50)
        var answer = 0
        while answer < bytes {
            XCTAssertTrue(writer.run("PUSH blue \(data)").first?.hasPrefix("OK") ?? false)
            answer = writer.run("GET").first?.utf8.count ?? 0
        }
        return answer + 1
    }

    /// A client that has stopped reading and sent `input` to the big room.
    private func stuckClient(_ hub: Hub, sending input: String) -> Client {
        let client = hub.connect()
        client.connection.holdsWrites = true
        client.run("JOIN \(room)")
        client.sendRaw(input)
        return client
    }

    /// The peer reads everything sent so far, then the loop turns once;
    /// returns the lines that turn wrote.
    private func readAndTurn(_ client: Client, _ hub: Hub) -> [String] {
        client.connection.queuedWriteBytes = 0
        client.writeQueueDrained()
        hub.flush()
        return client.newLines()
    }

    func test_heldLines_pipelinedGetsNeverRead_outputStopsAtBoundPlusOneReply() throws {
        let hub = try Hub(limits: limits(maxPending: 4_096, maxDepth: 64))
        let reply = bigRoom(hub, bytes: 1_000)
        let client = stuckClient(hub, sending: String(repeating: "GET\n", count: 2_000))
        hub.flush()
        let held = client.connection.queuedWriteBytes
        XCTAssertLessThanOrEqual(held, 4_096 + reply, "the bound plus the one reply that crossed it")
        XCTAssertEqual(client.connection.count("pause"), 1)
        XCTAssertTrue(client.session.linesHeldForOutput)
        XCTAssertFalse(hub.server.hasHeldLinesReadyToRun, "nothing may run before the output drains")
        for _ in 0..<5 { hub.flush() }
        XCTAssertEqual(client.connection.queuedWriteBytes, held, "no flush runs more while nothing drains")
        client.connection.queuedWriteBytes = 0
        XCTAssertTrue(hub.server.hasHeldLinesReadyToRun, "drained: the loop must come round for the held lines")
    }

    func test_heldLines_afterDrain_everyReplyComesInOrder() throws {
        let hub = try Hub(limits: limits(maxPending: 4_096, maxDepth: 64))
        _ = bigRoom(hub, bytes: 1_000)
        let client = stuckClient(hub, sending: String(repeating: "GET\nPING n\n", count: 300))
        hub.flush()
        var lines = client.newLines()
        for _ in 0..<1_000 where lines.count < 600 {
            lines += readAndTurn(client, hub)
        }
        lines += readAndTurn(client, hub)
        XCTAssertEqual(lines.count, 600)
        for (index, line) in lines.enumerated() {
            XCTAssertTrue(index % 2 == 0 ? line.hasPrefix("STATE ") : line == "PONG n", "line \(index): \(line.prefix(40))")
        }
        XCTAssertFalse(client.session.linesHeldForOutput)
        XCTAssertEqual(client.connection.count("resume"), client.connection.count("pause"), "reading resumes once nothing is held")
        XCTAssertFalse(client.session.output.readingPaused)
    }

    func test_heldLines_inputEndedWhileHeld_lastLinesStillRunThenClose() throws {
        let hub = try Hub(limits: limits(maxPending: 4_096, maxDepth: 64))
        _ = bigRoom(hub, bytes: 1_000)
        let client = stuckClient(hub, sending: String(repeating: "GET\n", count: 20) + "PING last")
        client.inputEnded()
        hub.flush()
        XCTAssertFalse(client.connection.isClosed, "its lines are still to be answered")
        var lines = client.newLines()
        for _ in 0..<100 where !client.connection.isClosed {
            lines += readAndTurn(client, hub)
        }
        XCTAssertEqual(lines.count, 21)
        XCTAssertEqual(lines.last, "PONG last")
        XCTAssertTrue(client.connection.isClosed)
    }

    func test_heldLines_otherClientsRunWhileOneIsHeld() throws {
        let hub = try Hub(limits: limits(maxPending: 4_096, maxDepth: 64))
        _ = bigRoom(hub, bytes: 1_000)
        _ = stuckClient(hub, sending: String(repeating: "GET\n", count: 1_000))
        let other = hub.connect()
        XCTAssertEqual(other.run("PING hi"), ["PONG hi"])
    }

    func test_heldLines_outputFromOutsideLinesCountsToo() throws {
        let hub = try Hub(limits: limits(maxPending: 1_000))
        let client = hub.connect()
        // Pongs a framing layer queued on its own.
        client.connection.queuedWriteBytes = 5_000
        hub.server.outputQueuedOutsideLines(for: client.session)
        XCTAssertEqual(client.connection.count("pause"), 1)
        client.sendRaw("PING a\n")
        hub.flush()
        XCTAssertEqual(client.newLines(), [], "no line runs while the pongs are queued")
        client.connection.queuedWriteBytes = 0
        client.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(client.newLines(), ["PONG a"])
        XCTAssertEqual(client.connection.count("resume"), 1)
    }
}
