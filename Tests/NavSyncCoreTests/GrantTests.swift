import NavSyncCore
import XCTest

/// What each kind of grant may run, judged from the verb table before a
/// line is parsed.
final class GrantTests: XCTestCase {
    private let parser = CommandParser(catalog: .builtIn, maxDepth: 64)
    private let viewMain = Grant(role: .view, rooms: .only(["main"]), name: "kiosk")
    private let controlLobby = Grant(role: .control, rooms: .only(["lobby"]), name: "control")

    private func code(_ line: String, _ grant: Grant, in room: String = "main") -> String {
        switch parser.parse(Array(line.utf8), grant: grant, room: room) {
        case .success?: return "ok"
        case .failure(let error)?: return error.code.rawValue
        case nil: return "blank"
        }
    }

    func test_grant_everyVerbHasARule_andRoleNoneMeansBeforeAuth() {
        for verb in Verb.allCases {
            let access = verb.row.access
            XCTAssertEqual(access.role == .none, [.ping, .hello, .auth, .quit, .whoami].contains(verb), verb.rawValue)
            XCTAssertEqual(access.role == .control, verb.row.isMutation || verb == .guarded, verb.rawValue)
        }
    }

    func test_grant_viewer_mutationsAreForbiddenBeforeTheirParseErrors() {
        for line in ["SELECT green", "SELECT nosuch", "PUSH", "POP now", "OPEN %%%", "IF x POP", "IF 1 GET",
                     "IF 1 FROB", "dismiss", "NEXT"] {
            XCTAssertEqual(code(line, viewMain), "forbidden", line)
        }
        XCTAssertEqual(code("GET", viewMain), "ok")
        XCTAssertEqual(code("GET extra", viewMain), "bad-args")
        XCTAssertEqual(code("FROB", viewMain), "unknown-command")
        XCTAssertEqual(code("WATCH 3", viewMain), "ok")
    }

    func test_grant_roomOutsideTheList_forbidsRoomCommandsOnly() {
        for line in ["GET", "WATCH", "SELECT green", "SELECT nosuch", "IF 0 POP"] {
            XCTAssertEqual(code(line, controlLobby, in: "main"), "forbidden", line)
            XCTAssertNotEqual(code(line, controlLobby, in: "lobby"), "forbidden", line)
        }
        for line in ["UNWATCH", "SCREENS", "MESSAGES", "ROOMS", "HELP", "PING", "HELLO", "WHOAMI", "AUTH x", "QUIT"] {
            XCTAssertEqual(code(line, controlLobby, in: "main"), "ok", line)
        }
    }

    func test_grant_roomOutsideTheList_withdrawalsAreAnswered_positionsAndFollowingAreNot() {
        for line in ["AT -", "at  -  ", "PRESENCE OFF", "presence off", "PRESENCE  Off"] {
            XCTAssertEqual(code(line, controlLobby, in: "main"), "ok", line)
        }
        for line in ["AT /red", "AT - x", "AT", "PRESENCE", "PRESENCE OFF now", "PRESENCE ON", "WHO"] {
            XCTAssertEqual(code(line, controlLobby, in: "main"), "forbidden", line)
        }
        // Before AUTH they need a role like every room command.
        XCTAssertEqual(code("AT -", .unauthenticated), "auth-required")
        XCTAssertEqual(code("PRESENCE OFF", .unauthenticated), "auth-required")
    }

    func test_grant_join_judgesTheRoomAsWritten() {
        XCTAssertEqual(code("JOIN lobby", controlLobby), "ok")
        XCTAssertEqual(code("JOIN main", controlLobby), "forbidden")
        XCTAssertEqual(code("JOIN bad!", controlLobby), "forbidden")
        XCTAssertEqual(code("JOIN", controlLobby), "forbidden")
        XCTAssertEqual(code("JOIN bad!", .unrestricted), "bad-args")
        XCTAssertEqual(code("JOIN  lobby ", controlLobby), "ok")
    }

    func test_grant_stats_needsEveryRoom() {
        XCTAssertEqual(code("STATS", controlLobby, in: "lobby"), "forbidden")
        XCTAssertEqual(code("STATS", Grant(role: .view, rooms: .every, name: "view")), "ok")
        XCTAssertEqual(code("STATS x", Grant(role: .view, rooms: .every, name: "view")), "bad-args")
    }

    func test_grant_none_isAuthRequiredForEverythingButTheGreeters() {
        for line in ["GET", "FROB", "SELECT nosuch", "STATS", "JOIN bad!", "IF x"] {
            XCTAssertEqual(code(line, .unauthenticated), "auth-required", line)
        }
        for line in ["PING", "HELLO 1", "AUTH x", "QUIT", "WHOAMI"] {
            XCTAssertEqual(code(line, .unauthenticated), "ok", line)
        }
        XCTAssertEqual(code("WHOAMI x", .unauthenticated), "bad-args")
        guard case .failure(let error)? = parser.parse([0x47, 0xFF], grant: .unauthenticated, room: "main") else {
            return XCTFail("invalid UTF-8 was not refused")
        }
        XCTAssertEqual(error.code, .badEncoding)
    }

    func test_grant_roomsText_isStarSortedListOrDash() {
        XCTAssertEqual(Grant.unrestricted.roomsText, "*")
        XCTAssertEqual(Grant.unauthenticated.roomsText, "-")
        XCTAssertEqual(Grant(role: .view, rooms: .only(["b", "a", "c"]), name: "v").roomsText, "a,b,c")
        XCTAssertEqual(Grant.anonymous(.view).name, "anon")
        XCTAssertFalse(Grant.unauthenticated.covers("main"))
    }

    func test_wire_you_writesIdNameRoleRooms() {
        XCTAssertEqual(String(decoding: Wire.you(id: "7", grant: viewMain), as: UTF8.self), "YOU 7 kiosk view main\n")
        XCTAssertEqual(String(decoding: Wire.you(id: "1", grant: .unauthenticated), as: UTF8.self), "YOU 1 anon none -\n")
    }
}
