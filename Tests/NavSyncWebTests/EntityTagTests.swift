import NavSyncCore
import NavSyncWeb
import XCTest

/// Revisions as entity tags, and the answer to a change as HTTP says it.
final class EntityTagTests: XCTestCase {
    func test_header_isTheQuotedRevision() {
        XCTAssertEqual(EntityTag.header(0), "\"0\"")
        XCTAssertEqual(EntityTag.header(UInt64.max), "\"18446744073709551615\"")
    }

    func test_ifMatch_takesOneQuotedDecimalOnly() {
        XCTAssertEqual(EntityTag.ifMatchRevision("\"12\""), 12)
        XCTAssertEqual(EntityTag.ifMatchRevision("  \"0\" "), 0)
        for bad in ["12", "\"\"", "W/\"12\"", "*", "\"1\", \"2\"", "\"-1\"", "\"1.0\"", "\"18446744073709551616\"",
                    "\"1 2\"", "\"12", "12\"", "\"0x1\"", ""] {
            XCTAssertNil(EntityTag.ifMatchRevision(bad), bad)
        }
    }

    func test_ifNoneMatch_matchesAnyListedRevisionOrStar_weakIncluded() {
        XCTAssertTrue(EntityTag.noneMatchHits("\"4\"", revision: 4))
        XCTAssertTrue(EntityTag.noneMatchHits("\"1\", W/\"4\"", revision: 4))
        XCTAssertTrue(EntityTag.noneMatchHits("*", revision: 9))
        XCTAssertFalse(EntityTag.noneMatchHits("\"5\"", revision: 4))
        XCTAssertFalse(EntityTag.noneMatchHits("4", revision: 4))
        XCTAssertFalse(EntityTag.noneMatchHits("\"abc\"", revision: 4))
    }

    func test_changeAnswer_followsTheStatusTable() {
        XCTAssertEqual(ChangeAnswer.forReply(.ok(revision: 8)), ChangeAnswer(status: 200, revision: 8, errorBody: nil))
        XCTAssertEqual(ChangeAnswer.forReply(ServerLine.parse("ERR conflict current=5")),
                       ChangeAnswer(status: 412, revision: 5, errorBody: #"{"error":"conflict","current":5}"#))
        for code in ["unavailable", "internal"] {
            let answer = ChangeAnswer.forReply(ServerLine.parse("ERR \(code) backplane down"))
            XCTAssertEqual(answer?.status, 503, code)
            XCTAssertEqual(answer?.errorBody, #"{"error":"\#(code)","message":"backplane down"}"#)
        }
        for code in ["unknown-screen", "no-next", "at-root", "no-sheet", "bad-route", "bad-args", "limit"] {
            let answer = ChangeAnswer.forReply(ServerLine.parse("ERR \(code) the words \"here\""))
            XCTAssertEqual(answer?.status, 422, code)
            XCTAssertEqual(answer?.errorBody, #"{"error":"\#(code)","message":"the words \"here\""}"#)
        }
        XCTAssertEqual(ChangeAnswer.forReply(ServerLine.parse("ERR forbidden no"))?.status, 403)
        XCTAssertNil(ChangeAnswer.forReply(ServerLine.parse("EVENT 3 pop /red")))
    }
}
