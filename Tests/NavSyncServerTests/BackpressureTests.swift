import XCTest
import NavSyncCore
@testable import NavSyncServer

/// A client that pipelines commands faster than it reads replies is not read
/// from until its output drains.
final class BackpressureTests: XCTestCase {
    func test_backpressure_pausesReadingWhileBackedUpAndResumesAfterDrain() throws {
        let hub = try Hub(limits: limits(maxPending: 200))
        let client = hub.connect()
        client.connection.queuedWriteBytes = 1_000
        let pipeline = String(repeating: "GET\n", count: 100)
        client.sendRaw(pipeline)
        XCTAssertEqual(client.connection.count("pause"), 1)
        client.sendRaw(pipeline)
        XCTAssertEqual(client.connection.count("pause"), 1, "paused once, not per chunk")
        hub.flush()
        XCTAssertEqual(client.connection.count("resume"), 0, "still backed up")
        XCTAssertEqual(client.newLines().count, 0, "nothing runs while the output is over the bound")

        client.connection.queuedWriteBytes = 0
        client.writeQueueDrained()
        var replies = 0
        for _ in 0..<100 where replies < 200 {
            hub.flush()
            replies += client.newLines().count
        }
        XCTAssertEqual(replies, 200, "replies are never dropped")
        XCTAssertEqual(client.connection.count("resume"), 1)
        XCTAssertEqual(client.connection.calls.last, "resume")
        XCTAssertEqual(client.run("PING"), ["PONG"])
    }

    func test_backpressure_ownOutboxOverLimitPausesUntilFlushed() throws {
        let hub = try Hub(limits: limits(maxPending: 200))
        let client = hub.connect()
        client.sendRaw(String(repeating: "HELP\n", count: 3))
        XCTAssertEqual(client.connection.count("pause"), 1)
        // One HELP's answer is over the bound: the next waits for a flush.
        // The transport takes everything at once, so each flush runs one.
        var ends = 0
        for _ in 0..<3 {
            XCTAssertEqual(client.connection.count("resume"), 0)
            hub.flush()
            ends += client.newLines().filter { $0 == "END" }.count
        }
        XCTAssertEqual(ends, 3)
        XCTAssertEqual(client.connection.calls.suffix(2), ["write", "resume"])
    }

    func test_backpressure_smallTrafficNeverPauses() throws {
        let hub = try Hub(limits: limits(maxPending: 200))
        let client = hub.connect()
        for _ in 0..<50 { client.run("GET") }
        XCTAssertEqual(client.connection.count("pause"), 0)
    }
}
