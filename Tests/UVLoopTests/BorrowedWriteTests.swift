import NavSyncCore
import UVLoop
import XCTest

/// `StreamConnection.writeWithoutQueuing(borrowing:)`: offered straight
/// from the caller's buffer, never queued, and no bytes taken while other
/// writes wait (order is kept).
final class BorrowedWriteTests: LoopTestCase {
    func test_borrowedWrite_idlePeer_takesEveryByte() throws {
        let (server, client) = try connectedPair()
        let line = Array("EVENT 1 /red\n".utf8)
        let taken = line.withUnsafeBytes { server.writeWithoutQueuing(borrowing: $0) }
        XCTAssertEqual(taken, line.count)
        XCTAssertEqual(server.queuedWriteBytes, 0, "nothing queued")
        let inbox = Inbox(client)
        spin("the line") { inbox.bytes.count >= line.count }
        XCTAssertEqual(inbox.bytes, line)
    }

    func test_borrowedWrite_behindQueuedWrites_takesNothing() throws {
        let (server, client) = try connectedPair()
        let big = (0..<(4 * 1024 * 1024)).map { UInt8($0 % 251) }
        server.write([big])
        XCTAssertGreaterThan(server.queuedWriteBytes, 0)
        let tail = Array("tail\n".utf8)
        XCTAssertEqual(tail.withUnsafeBytes { server.writeWithoutQueuing(borrowing: $0) }, 0)
        server.write([tail])
        let inbox = Inbox(client)
        spin("all bytes") { inbox.bytes.count >= big.count + tail.count }
        XCTAssertTrue(inbox.bytes == big + tail, "bytes reordered or lost")
    }

    func test_borrowedWrite_empty_takesNothingAndQueuesNothing() throws {
        let (server, _) = try connectedPair()
        XCTAssertEqual([UInt8]().withUnsafeBytes { server.writeWithoutQueuing(borrowing: $0) }, 0)
        XCTAssertEqual(server.queuedWriteBytes, 0)
    }
}
