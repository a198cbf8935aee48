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
        XCTAssertEqual(client.newLines().count, 200, "replies are never dropped")

        client.connection.queuedWriteBytes = 0
        client.writeQueueDrained()
        hub.flush()
        XCTAssertEqual(client.connection.count("resume"), 1)
        XCTAssertEqual(client.connection.calls.last, "resume")
        XCTAssertEqual(client.run("PING"), ["PONG"])
        XCTAssertEqual(client.connection.count("pause"), 1)
    }

    func test_backpressure_ownOutboxOverLimitPausesUntilFlushed() throws {
        let hub = try Hub(limits: limits(maxPending: 200))
        let client = hub.connect()
        client.sendRaw(String(repeating: "HELP\n", count: 3))
        XCTAssertEqual(client.connection.count("pause"), 1)
        hub.flush()
        // The transport took everything at once: reading resumes at this flush.
        XCTAssertEqual(client.connection.calls.suffix(2), ["write", "resume"])
    }

    func test_backpressure_smallTrafficNeverPauses() throws {
        let hub = try Hub(limits: limits(maxPending: 200))
        let client = hub.connect()
        for _ in 0..<50 { client.run("GET") }
        XCTAssertEqual(client.connection.count("pause"), 0)
    }
}
