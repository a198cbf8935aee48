@testable import NavSyncBackplane
import XCTest

/// The names a fleet uses in Redis: keys per database, channels server-wide.
final class BackplaneKeysTests: XCTestCase {
    func test_keys_roomKeysCarryTheRoomAsHashTag_andDoNotDependOnTheDatabase() {
        let zero = BackplaneKeys(prefix: "navsync:", database: 0)
        let three = BackplaneKeys(prefix: "navsync:", database: 3)
        XCTAssertEqual(zero.state("main"), "navsync:{main}:state")
        XCTAssertEqual(zero.history("main"), "navsync:{main}:history")
        XCTAssertEqual(three.state("main"), zero.state("main"), "keys are apart by database already")
        XCTAssertEqual(three.rooms, "navsync:rooms")
    }

    func test_channels_carryTheDatabase_andHoldNoHashTag() {
        let three = BackplaneKeys(prefix: "navsync:", database: 3)
        XCTAssertEqual(three.changesChannel, "navsync:changes:db3")
        XCTAssertEqual(three.catalogChannel, "navsync:catalog-changed:db3")
        XCTAssertEqual(BackplaneKeys(prefix: "navsync:").changesChannel, "navsync:changes:db0")
        XCTAssertFalse(three.changesChannel.contains("{"))
    }

    /// Prefixes chosen to look like another fleet's database suffix still
    /// give every (prefix, database) pair channel names of its own.
    func test_channels_differForEveryPrefixAndDatabase() {
        let prefixes = ["navsync:", "navsync:changes:db3", "navsync:changes:db", "a", "a:db1", "x1", "x", "changes:db0"]
        var seen: [String: String] = [:]
        for prefix in prefixes {
            for database in [0, 1, 3, 10, 13, 65_535] {
                let keys = BackplaneKeys(prefix: prefix, database: database)
                for channel in [keys.changesChannel, keys.catalogChannel] {
                    let owner = "\(prefix) /\(database)"
                    XCTAssertNil(seen[channel].flatMap { $0 == owner ? nil : $0 }, "\(channel) is \(owner)'s and \(seen[channel] ?? "")'s")
                    seen[channel] = owner
                }
            }
        }
        XCTAssertEqual(seen.count, prefixes.count * 6 * 2)
    }
}
