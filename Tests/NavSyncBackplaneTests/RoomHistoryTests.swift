import XCTest
import RedisClient
@testable import NavSyncBackplane

final class RoomHistoryTests: XCTestCase {
    private func entry(_ id: String, _ fields: [String]) -> RedisReply {
        .array([.bulk(id), .array(fields.map { .bulk($0) })])
    }

    func test_read_entries_areTheRoomsEventsInOrder() {
        let read = RoomHistory.read([entry("4-0", ["op", "push", "route", "/red/blue", "tag", "a.1"]),
                                     entry("5-0", ["tag", "b.2", "route", "/red", "op", "pop"])], room: "main")
        XCTAssertEqual(read, .success([PublishedChange(room: "main", revision: 4, tag: "a.1", op: "push", route: "/red/blue"),
                                       PublishedChange(room: "main", revision: 5, tag: "b.2", op: "pop", route: "/red")]))
    }

    func test_read_oneEntryItCannotTake_failsTheWholeRead() {
        let bad = entry("x-0", ["op", "push"])
        XCTAssertEqual(RoomHistory.read([entry("4-0", ["op", "push", "route", "/red/blue", "tag", "a.1"]), bad], room: "main"),
                       .failure(UnreadableRoomData(why: "its history holds an entry this daemon cannot take: an array of 2")))
    }

    func test_command_readsFromTheFirstMissingRevision() {
        XCTAssertEqual(RoomHistory.command(BackplaneKeys(prefix: "p:"), room: "main", from: 3), ["XRANGE", "p:{main}:history", "3-0", "+"])
    }
}
