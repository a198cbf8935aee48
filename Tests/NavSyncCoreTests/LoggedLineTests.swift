import XCTest
import NavSyncCore

final class LoggedLineTests: XCTestCase {
    private func logged(_ text: String) -> String { LoggedLine.text(Array(text.utf8)) }

    func test_loggedLine_authArgumentIsRedactedInEveryForm() {
        let table: [(line: String, shown: String)] = [
            ("AUTH s3cret", "AUTH <redacted>"),
            ("auth s3cret", "auth <redacted>"),
            ("AuTh   s3cret with spaces  ", "AuTh <redacted>"),
            ("\t AUTH\ts3cret", "AUTH <redacted>"),
            ("AUTH", "AUTH"),
            ("AUTH   ", "AUTH"),
        ]
        for (line, shown) in table {
            XCTAssertEqual(logged(line), shown, line)
        }
    }

    func test_loggedLine_tokenThatIsNotUTF8IsRedactedToo() {
        let line = Array("AUTH ".utf8) + [0xFF, 0xFE] + Array("s3cret".utf8)
        XCTAssertEqual(LoggedLine.text(line), "AUTH <redacted>")
    }

    func test_loggedLine_otherLinesAreShownAsSentUpToTheLimit() {
        XCTAssertEqual(logged("SELECT blue note"), "SELECT blue note")
        XCTAssertEqual(logged("AUTHOR x"), "AUTHOR x")
        XCTAssertEqual(logged("PING AUTH x"), "PING AUTH x")
        let long = String(repeating: "x", count: 500)
        XCTAssertEqual(logged("PUSH blue " + long).utf8.count, LoggedLine.maxBytes)
    }
}
