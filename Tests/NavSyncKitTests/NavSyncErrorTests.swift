import XCTest
import NavSyncKit

/// What a person sees when they print an error: words, not Swift values.
final class NavSyncErrorTests: XCTestCase {
    func test_description_namesTheDaemonsCodeAndMessage() {
        let error = NavSyncError.server(code: "bad-args", message: "viewB needs data")
        XCTAssertEqual("\(error)", "the daemon refused (bad-args): viewB needs data")
        XCTAssertEqual("\(NavSyncError.server(code: "busy", message: ""))", "the daemon refused: busy")
    }

    func test_description_neverPrintsTheEnumCase() {
        let all: [NavSyncError] = [.server(code: "c", message: "m"), .disconnected, .notRunning,
                                   .invalidData("a line break in the data"), .unknownScreen("blue")]
        for error in all {
            let text = "\(error)"
            XCTAssertFalse(text.contains("(code:"), text)
            XCTAssertFalse(text.hasPrefix("disconnected") || text.hasPrefix("notRunning") || text.hasPrefix("unknownScreen("),
                           text)
            XCTAssertFalse(text.contains("\n"), "one line: \(text)")
        }
        XCTAssertTrue("\(NavSyncError.unknownScreen("blue"))".contains("blue"))
        XCTAssertTrue("\(NavSyncError.invalidData("a line break in the data"))".hasSuffix("a line break in the data"))
    }
}
