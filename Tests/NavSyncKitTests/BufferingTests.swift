import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
import XCTest

/// The two bounded queues: a `changes` stream nobody reads, and the outbox
/// from the loop thread to a main actor that does not run.
final class BufferingTests: XCTestCase {
    private func change(_ revision: UInt64) -> NavChange<NavEntry> {
        NavChange(revision: revision, op: .push, stack: [NavEntry("red"), NavEntry("blue", data: "\(revision)")], sheets: [])
    }

    func test_changeStream_unreadReader_holdsABoundAndThenReportsAResync() async {
        var streams = ChangeStreams<NavEntry>()
        let stream = streams.add { _ in }
        let limit = ChangeStreams<NavEntry>.bufferLimit
        let total = UInt64(limit + 50)
        for revision in 1...total { streams.yield(change(revision)) }

        var seen: [NavChange<NavEntry>] = []
        var iterator = stream.makeAsyncIterator()
        for _ in 0...limit { if let next = await iterator.next() { seen.append(next) } }
        XCTAssertEqual(seen.count, limit + 1, "the stream held its limit and one resync, no more")
        XCTAssertEqual(seen.prefix(limit).map(\.revision), Array(1...UInt64(limit)))
        XCTAssertTrue(seen.prefix(limit).allSatisfy { $0.op == .push })
        XCTAssertEqual(seen.last?.op, .state)
        XCTAssertEqual(seen.last?.revision, UInt64(limit + 1))

        // The reader caught up: the next change brings it to the present with one more resync, then it flows.
        streams.yield(change(total + 1))
        streams.yield(change(total + 2))
        streams.finishAll()
        var rest: [NavChange<NavEntry>] = []
        while let next = await iterator.next() { rest.append(next) }
        XCTAssertEqual(rest.map(\.op), [.state, .push])
        XCTAssertEqual(rest.map(\.revision), [total + 1, total + 2])
    }

    func test_changeStream_readerThatKeepsUp_seesEveryRevision() async {
        var streams = ChangeStreams<NavEntry>()
        let stream = streams.add { _ in }
        var iterator = stream.makeAsyncIterator()
        for revision in UInt64(1)...2000 {
            streams.yield(change(revision))
            let next = await iterator.next()
            XCTAssertEqual(next?.revision, revision)
            XCTAssertEqual(next?.op, .push)
        }
    }

    func test_outbox_mergesStatesPastItsLimitAndKeepsReplies() {
        var outbox = EngineOutbox()
        XCTAssertTrue(outbox.append(.link(.live)), "the first event of a batch schedules a delivery")
        let reply = EngineEvent.reply(7, .ok(revision: 3))
        for revision in UInt64(1)...UInt64(EngineOutbox.stateLimit * 3) {
            XCTAssertFalse(outbox.append(.event(RoomState(stack: [RouteEntry(screen: "red")], revision: revision), op: "push")))
            if revision == 3 { _ = outbox.append(reply) }
        }
        XCTAssertLessThanOrEqual(outbox.events.count, EngineOutbox.stateLimit + 2)
        let batch = outbox.takeAll()
        XCTAssertEqual(batch.first, .link(.live))
        XCTAssertTrue(batch.contains(reply))
        let states = batch.compactMap(\.state)
        XCTAssertEqual(states.last?.revision, UInt64(EngineOutbox.stateLimit * 3), "the latest state survives")
        XCTAssertEqual(states.map(\.revision), states.map(\.revision).sorted())
        XCTAssertTrue(outbox.append(.link(.live)), "after takeAll a new batch schedules again")
    }
}
