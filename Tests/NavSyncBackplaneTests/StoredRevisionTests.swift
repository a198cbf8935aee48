@testable import NavSyncBackplane
import RedisClient
import XCTest

/// Revisions read back from Redis are believed only as this daemon writes them.
final class StoredRevisionTests: XCTestCase {
    func test_parse_takesPlainDecimalUpToOneBelowTheLargest() {
        XCTAssertEqual(StoredRevision.parse("0"), 0)
        XCTAssertEqual(StoredRevision.parse("1"), 1)
        XCTAssertEqual(StoredRevision.parse("18446744073709551614"), UInt64.max - 1)
    }

    func test_parse_refusesWhatThisDaemonWouldNotWrite() {
        for text in ["", "18446744073709551615", "18446744073709551616", "99999999999999999999999", "+7", "-1", "007",
                     "00", " 7", "7 ", "1e3", "0x10", "seven", "٣"] {
            XCTAssertNil(StoredRevision.parse(text), text)
        }
    }

    func test_parseField_missingIsNeverChanged_otherRepliesAreChecked() {
        XCTAssertEqual(StoredRevision.parse(field: .null), 0)
        XCTAssertEqual(StoredRevision.parse(field: .string(Array("42".utf8))), 42)
        XCTAssertEqual(StoredRevision.parse(field: .integer(42)), 42)
        XCTAssertNil(StoredRevision.parse(field: .integer(-1)))
        XCTAssertNil(StoredRevision.parse(field: .string(Array("18446744073709551615".utf8))))
        XCTAssertNil(StoredRevision.parse(field: .error("WRONGTYPE")))
        XCTAssertNil(StoredRevision.parse(field: .array([])))
    }

    func test_answer_withARevisionItCannotTake_isNoAnswer() {
        func reply(_ parts: [String]) -> RedisReply { .array(parts.map { .string(Array($0.utf8)) }) }
        XCTAssertEqual(ChangeFunction.Answer(reply(["applied", "5"])), .applied(revision: 5))
        XCTAssertNil(ChangeFunction.Answer(reply(["applied", "18446744073709551615"])))
        XCTAssertNil(ChangeFunction.Answer(reply(["moved", "+5", "/red", "t"])))
        XCTAssertNil(PublishedChange.parse(Array("e main 18446744073709551615 t push /red".utf8)))
        XCTAssertEqual(PublishedChange.parse(Array("e main 9 t push /red".utf8))?.change.revision, 9)
    }
}
