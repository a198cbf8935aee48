@testable import NavSyncBackplane
import XCTest

/// Every rejection is counted; the warning about them is at most one a second.
final class PresenceRejectionsTests: XCTestCase {
    func test_everyRejectionCounted_warnedAtMostOnceASecond_withHowManyFollowed() {
        var rejections = PresenceRejections()
        let first = rejections.note(.badRole, from: "the presence channel", now: 10_000)
        XCTAssertEqual(first?.contains("a role other than control or view from the presence channel"), true, first ?? "")
        for step in 1...500 {
            XCTAssertNil(rejections.note(.malformed, from: "the presence channel", now: 10_000 + UInt64(step)))
        }
        XCTAssertNil(rejections.note(.badName, from: "x", now: 10_999, times: 9))
        XCTAssertEqual(rejections.count, 510)
        let next = rejections.note(.badID, from: "the members hash of room main", now: 11_000)
        XCTAssertEqual(next?.contains("a line that is not"), true, "names the first since the last line: \(next ?? "")")
        XCTAssertEqual(next?.contains("and 509 more"), true, next ?? "")
        XCTAssertEqual(next?.hasSuffix("presence_rejected is 511"), true, next ?? "")
        XCTAssertNil(rejections.note(.badID, from: "x", now: 11_500))
    }
}
