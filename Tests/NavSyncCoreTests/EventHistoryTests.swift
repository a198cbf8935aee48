import NavSyncCore
import XCTest

/// The per-room ring `WATCH <rev>` replays from.
final class EventHistoryTests: XCTestCase {
    private func event(_ revision: UInt64, bytes: Int = 10) -> [UInt8] {
        let head = Array("EVENT \(revision) ".utf8)
        return head + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, bytes - head.count - 1)) + [10]
    }

    /// A history holding revisions 1...n.
    private func filled(_ n: UInt64, maxCount: Int = 1024, maxBytes: Int = 1 << 20, bytes: Int = 10) -> EventHistory {
        var history = EventHistory(maxCount: maxCount, maxBytes: maxBytes)
        for revision in 1...n { history.append(event(revision, bytes: bytes), revision: revision) }
        return history
    }

    func test_countBound_keepsTheLastN() {
        let history = filled(10, maxCount: 4)
        XCTAssertEqual(history.count, 4)
        XCTAssertEqual(history.oldestRevision, 7)
        XCTAssertEqual(history.newestRevision, 10)
        XCTAssertEqual(history.events(after: 6, current: 10), (7...10).map { event($0) })
    }

    func test_byteBound_keepsFewerWhenEventsAreBig() {
        let history = filled(10, maxCount: 100, maxBytes: 35, bytes: 10)
        XCTAssertEqual(history.count, 3, "three 10-byte events fit in 35 bytes, four do not")
        XCTAssertEqual(history.bytes, 30)
        XCTAssertEqual(history.oldestRevision, 8)
    }

    func test_eventBiggerThanTheByteBound_leavesNothingHeld() {
        var history = filled(3, maxCount: 10, maxBytes: 50)
        history.append(event(4, bytes: 51), revision: 4)
        XCTAssertEqual(history.count, 0)
        XCTAssertNil(history.events(after: 3, current: 4), "event 4 is not held: resync")
        XCTAssertEqual(history.events(after: 4, current: 4), [], "nothing was missed")
        history.append(event(5), revision: 5)
        XCTAssertEqual(history.events(after: 4, current: 5), [event(5)])
    }

    func test_replayBoundaries_oldestHeldOneOlderCurrentOneNewer() {
        let history = filled(20, maxCount: 5)  // holds 16...20
        XCTAssertEqual(history.events(after: 15, current: 20), (16...20).map { event($0) },
                       "after the revision just before the oldest held: every held event")
        XCTAssertEqual(history.events(after: 16, current: 20), (17...20).map { event($0) }, "after the oldest held")
        XCTAssertNil(history.events(after: 14, current: 20), "one older than that: event 15 is gone")
        XCTAssertEqual(history.events(after: 20, current: 20), [], "the current revision: nothing to replay")
        XCTAssertNil(history.events(after: 21, current: 20), "newer than the room: resync")
        XCTAssertNil(history.events(after: 0, current: 20))
    }

    func test_historyAtTheLargestRevisions_replaysWithoutOverflow() {
        var history = EventHistory(maxCount: 4, maxBytes: 1024)
        for revision in (UInt64.max - 5)...UInt64.max { history.append(event(revision), revision: revision) }
        XCTAssertEqual(history.oldestRevision, .max - 3)
        XCTAssertEqual(history.events(after: .max, current: .max), [])
        XCTAssertEqual(history.events(after: .max - 1, current: .max), [event(.max)])
        XCTAssertEqual(history.events(after: .max - 4, current: .max), ((UInt64.max - 3)...UInt64.max).map { event($0) })
        XCTAssertNil(history.events(after: .max - 5, current: .max))
        XCTAssertNil(history.events(after: .max, current: .max - 1), "newer than the room: resync")
        XCTAssertNil(history.events(after: 0, current: .max))
    }

    func test_emptyHistory_continuesOnlyAtTheCurrentRevision() {
        let history = EventHistory(maxCount: 8, maxBytes: 1024)
        XCTAssertEqual(history.events(after: 0, current: 0), [])
        XCTAssertEqual(history.events(after: 7, current: 7), [], "after a restart, a client that is current loses nothing")
        XCTAssertNil(history.events(after: 6, current: 7), "after a restart the missed change is not held")
    }

    func test_aGapInRevisions_startsAfresh() {
        var history = filled(5)
        history.append(event(9), revision: 9)
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history.oldestRevision, 9)
        XCTAssertNil(history.events(after: 5, current: 9))
        XCTAssertEqual(history.events(after: 8, current: 9), [event(9)])
    }

    func test_ringWrapsAndGrows_keepingOrder() {
        // Byte drops free slots before the ring is full; growing later must not overwrite.
        var history = EventHistory(maxCount: 6, maxBytes: 40)
        var random = SplitMix64(seed: 3)
        for revision in UInt64(1)...300 {
            history.append(event(revision, bytes: Int.random(in: 8...20, using: &random)), revision: revision)
            let oldest = history.oldestRevision!
            let replay = history.events(after: oldest - 1, current: revision)!
            XCTAssertEqual(replay.count, history.count)
            XCTAssertLessThanOrEqual(history.count, 6)
            XCTAssertLessThanOrEqual(history.bytes, 40)
            XCTAssertEqual(replay.map { String(decoding: $0, as: UTF8.self).split(separator: " ")[1] },
                           (oldest...revision).map { Substring(String($0)) }, "at revision \(revision)")
        }
    }
}
