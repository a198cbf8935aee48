import XCTest
import RedisClient
@testable import NavSyncBackplane

final class StoredRoomHashTests: XCTestCase {
    func test_read_threeFields_areTheRoomsHash() {
        XCTAssertEqual(StoredRoomHash.read(.array([.bulk("7"), .bulk("/red/blue"), .bulk("a.1")])),
                       .success(StoredRoomHash(revision: 7, route: "/red/blue", tag: "a.1")))
    }

    func test_read_missingFields_areARoomNeverChanged() {
        XCTAssertEqual(StoredRoomHash.read(.array([.null, .null, .null])),
                       .success(StoredRoomHash(revision: 0, route: "", tag: "")))
    }

    func test_read_errorOrWrongShape_isUnreadableWithRedisWords() {
        XCTAssertEqual(StoredRoomHash.read(.error("WRONGTYPE Operation against a key holding the wrong kind of value")),
                       .failure(.init(why: "WRONGTYPE Operation against a key holding the wrong kind of value")))
        XCTAssertEqual(StoredRoomHash.read(.array([.bulk("1")])), .failure(.init(why: "an array of 1")))
    }

    func test_read_revisionNotOneThisDaemonWrites_isUnreadable() {
        XCTAssertEqual(StoredRoomHash.read(.array([.bulk("-1"), .bulk("/red"), .bulk("t")])),
                       .failure(.init(why: "its revision \"-1\" is not one this daemon can take")))
    }

    func test_command_readsRevRouteTagOfTheRoomsStateKey() {
        XCTAssertEqual(StoredRoomHash.command(BackplaneKeys(prefix: "p:"), room: "main"),
                       ["HMGET", "p:{main}:state", "rev", "route", "tag"])
    }
}
