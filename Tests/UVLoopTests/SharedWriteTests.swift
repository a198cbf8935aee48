import NavSyncCore
import UVLoop
import XCTest

/// `StreamConnection.write(shared:)`: what the kernel does not take is
/// queued as a reference into the shared buffer, not a copy; the buffer is
/// released exactly once per queued write and charged to its ledger once.
final class SharedWriteTests: LoopTestCase {
    /// A payload no idle peer takes at once, in a 251-byte cycle so that a
    /// lost, doubled or reordered piece would not line up again.
    private func payload(size: Int = 8 * 1024 * 1024) -> [UInt8] {
        (0..<size).map { UInt8($0 % 251) }
    }

    func test_sharedWrite_twoStalledPeers_bufferHeldOnceAndReleasedAfterBothDrain() throws {
        let (serverA, clientA) = try connectedPair()
        let (serverB, clientB) = try connectedPair()
        let ledger = SharedBytesLedger()
        let bytes = payload()
        weak var released: SharedBytes?
        do {
            let shared = SharedBytes(bytes, ledger: ledger)
            released = shared
            serverA.write(shared: shared)
            serverB.write(shared: shared)
            XCTAssertEqual(shared.queuedWrites, 2, "each connection queued the unsent tail")
        }
        // Only the queued writes keep it now.
        XCTAssertNotNil(released)
        XCTAssertEqual(ledger.heldBytes, bytes.count + SharedBytesLedger.blockOverhead, "held by two writes, counted once")
        XCTAssertGreaterThan(serverA.queuedWriteBytes, 0)
        XCTAssertGreaterThan(serverA.queuedWriteMemory, 1024 * 1024, "the connection's own figure counts what it holds")
        XCTAssertLessThan(serverA.queuedOwnMemory, 1024, "no copy: the connection's own memory is one request")
        XCTAssertLessThan(serverB.queuedOwnMemory, 1024)

        let inboxA = Inbox(clientA)
        spin("first peer drains") { inboxA.bytes.count == bytes.count && serverA.queuedWriteBytes == 0 }
        XCTAssertNotNil(released, "the other connection still holds it")
        XCTAssertEqual(released?.queuedWrites, 1)
        XCTAssertEqual(ledger.heldBytes, bytes.count + SharedBytesLedger.blockOverhead)

        let inboxB = Inbox(clientB)
        spin("second peer drains and the buffer is freed") {
            inboxB.bytes.count == bytes.count && released == nil
        }
        XCTAssertEqual(ledger.heldBytes, 0)
        XCTAssertTrue(inboxA.bytes == bytes, "first peer's bytes altered")
        XCTAssertTrue(inboxB.bytes == bytes, "second peer's bytes altered")
    }

    func test_sharedWrite_closedWithQueuedWrite_releasesTheBufferOnce() throws {
        let (server, client) = try connectedPair()
        let ledger = SharedBytesLedger()
        weak var released: SharedBytes?
        do {
            let shared = SharedBytes(payload(), ledger: ledger)
            released = shared
            server.write(shared: shared)
        }
        XCTAssertNotNil(released)
        XCTAssertGreaterThan(ledger.heldBytes, 0)
        server.close()
        let inbox = Inbox(client)
        // The cancelled write's callback lets go of it.
        spin("buffer freed after close") { released == nil && !inbox.ends.isEmpty }
        XCTAssertEqual(ledger.heldBytes, 0)
    }

    func test_sharedWrite_behindPrivateWrites_keepsOrder() throws {
        let (server, client) = try connectedPair()
        let big = payload(size: 4 * 1024 * 1024)
        server.write([big])
        XCTAssertGreaterThan(server.queuedWriteBytes, 0)
        let shared = SharedBytes(Array("shared tail\n".utf8))
        server.write(shared: shared)
        server.write([Array("last".utf8)])
        let inbox = Inbox(client)
        let expected = big + Array("shared tail\nlast".utf8)
        spin("all bytes") { inbox.bytes.count >= expected.count }
        XCTAssertTrue(inbox.bytes == expected, "bytes reordered or lost")
    }

    func test_sharedWrite_takenAtOnce_queuesNothing() throws {
        let (server, client) = try connectedPair()
        let ledger = SharedBytesLedger()
        let shared = SharedBytes(Array("EVENT 1 push /red/blue\n".utf8), ledger: ledger)
        server.write(shared: shared)
        XCTAssertEqual(shared.queuedWrites, 0)
        XCTAssertEqual(ledger.heldBytes, 0)
        XCTAssertEqual(server.queuedWriteBytes, 0)
        let inbox = Inbox(client)
        spin("line") { inbox.text == "EVENT 1 push /red/blue\n" }
    }
}
