import NavSyncCore
import XCTest

final class ServerLineTests: XCTestCase {
    func test_parse_everyKindOfLine() {
        XCTAssertEqual(ServerLine.parse("OK 12"), .ok(revision: 12))
        XCTAssertEqual(ServerLine.parse("STATE 3 /green/blue:hi%20there"), .state(revision: 3, route: "/green/blue:hi%20there"))
        XCTAssertEqual(ServerLine.parse("EVENT 4 push /a/b"), .event(revision: 4, op: "push", route: "/a/b"))
        XCTAssertEqual(ServerLine.parse("ERR conflict current=12"),
                       .error(ServerError(code: "conflict", message: "current=12", line: "ERR conflict current=12")))
        XCTAssertEqual(ServerLine.parse("PONG"), .pong(""))
        XCTAssertEqual(ServerLine.parse("PONG hello  there"), .pong("hello  there"))
        XCTAssertEqual(ServerLine.parse("HELLO navsync 1 0.1.0"), .hello("navsync 1 0.1.0"))
        XCTAssertEqual(ServerLine.parse("SCREEN red red green none Red"), .item("SCREEN red red green none Red"))
        XCTAssertEqual(ServerLine.parse("STAT uptime_s 4"), .item("STAT uptime_s 4"))
        XCTAssertEqual(ServerLine.parse("END"), .end)
        XCTAssertEqual(ServerLine.parse("BYE"), .bye)
    }

    func test_parse_you_acceptsASixthField_theSignedTokensExpiry() {
        XCTAssertEqual(ServerLine.parse("YOU 12 wall-1 view hall 1767225600"),
                       .you(Identity(id: "12", name: "wall-1", role: "view", rooms: "hall", expires: 1_767_225_600)))
        XCTAssertEqual(ServerLine.parse("YOU 3 ada control *"), .you(Identity(id: "3", name: "ada", role: "control", rooms: "*")))
        XCTAssertEqual(ServerLine.parse("YOU 12 wall-1 view hall soon"), .other("YOU 12 wall-1 view hall soon"))
        XCTAssertEqual(ServerLine.parse("YOU 12 wall-1 view hall 1 2"), .other("YOU 12 wall-1 view hall 1 2"))
    }

    func test_parse_malformedLines_areOther() {
        for line in ["", "OK", "OK x", "STATE 1", "STATE x /red", "EVENT 1 push", "EVENT 1 /red", "ENDX", "END now",
                     "navsync protocol 1", "STATE 1 /a /b"] {
            guard case .other = ServerLine.parse(line) else { return XCTFail("'\(line)' parsed as \(ServerLine.parse(line))") }
        }
    }

    func test_catalogEntry_fromScreenLine() {
        XCTAssertEqual(CatalogEntry(screenLine: "SCREEN viewB magenta viewC required Got data: from A"),
                       CatalogEntry(name: "viewB", color: .magenta, next: "viewC", data: .required, title: "Got data: from A"))
        XCTAssertEqual(CatalogEntry(screenLine: "SCREEN last cyan - none Last")?.next, nil)
        XCTAssertNil(CatalogEntry(screenLine: "SCREEN x red - sometimes X"))
        XCTAssertNil(CatalogEntry(screenLine: "STAT x 1"))
    }

    func test_parse_linesOfVersion1_1() {
        XCTAssertEqual(ServerLine.parse("CONTINUE 41"), .continued(revision: 41))
        XCTAssertEqual(ServerLine.parse("CATALOG"), .catalogChanged)
        XCTAssertEqual(ServerLine.parse("MESSAGE red Hello there"), .item("MESSAGE red Hello there"))
        XCTAssertEqual(ServerLine.parse("EVENT 5 present /red#blue:a"), .event(revision: 5, op: "present", route: "/red#blue:a"))
        for line in ["CONTINUE", "CONTINUE x", "CONTINUE -1", "CATALOG now"] {
            guard case .other = ServerLine.parse(line) else { return XCTFail("'\(line)' parsed as \(ServerLine.parse(line))") }
        }
    }
}
