import NavSyncCore
@testable import NavSyncWeb
import XCTest

/// `/rooms/NAME`'s body, byte for byte: keys in the contract's order, data
/// only when there is some, strings escaped as JSON needs.
final class RoomDocumentTests: XCTestCase {
    func test_json_keysInTheContractsOrder_dataOnlyWhenPresent() {
        let state = RoomState(Navigation(stack: [RouteEntry(screen: "green"), RouteEntry(screen: "blue", data: "hi")],
                                         sheets: [RouteEntry(screen: "red", data: "a note")]), revision: 3)
        XCTAssertEqual(RoomDocument.json(room: "main", state: state),
                       #"{"room":"main","rev":3,"route":"/green/blue:hi#red:a%20note","stack":[{"screen":"green"},"#
                       + #"{"screen":"blue","data":"hi"}],"sheets":[{"screen":"red","data":"a note"}]}"#)
    }

    func test_json_escapesWhatJSONMust_andLeavesSlashesAndUnicode() throws {
        let data = "say \"hi\"\\ now\n\t/✓\u{1}"
        let state = RoomState(Navigation(stack: [RouteEntry(screen: "blue", data: data)]), revision: 1)
        let text = RoomDocument.json(room: "a-b", state: state)
        XCTAssertTrue(text.contains(#""data":"say \"hi\"\\ now\n\t/✓\u0001""#), text)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual((parsed["stack"] as? [[String: String]])?.first?["data"], data, "it reads back as it was")
        XCTAssertEqual(parsed["sheets"] as? [String], [])
    }
}
