import XCTest
import NavSyncCore

final class WireTests: XCTestCase {
    private func entry(_ screen: String, _ data: String? = nil) -> RouteEntry {
        RouteEntry(screen: screen, data: data)
    }

    func test_wire_ok_isOkAndRevision() {
        XCTAssertEqual(Wire.ok(0), Array("OK 0\n".utf8))
        XCTAssertEqual(Wire.ok(12), Array("OK 12\n".utf8))
        XCTAssertEqual(Wire.ok(UInt64.max), Array("OK 18446744073709551615\n".utf8))
    }

    func test_wire_state_isRevisionAndRoute() {
        XCTAssertEqual(Wire.state(RoomState(stack: [entry("red")], revision: 0)).text, "STATE 0 /red\n")
        XCTAssertEqual(Wire.state(RoomState(stack: [entry("green"), entry("blue", "hello world")], revision: 2)).text,
                       "STATE 2 /green/blue:hello%20world\n")
    }

    func test_wire_event_isRevisionOpAndRoute() {
        let state = RoomState(stack: [entry("green"), entry("blue", "hello world")], revision: 2)
        XCTAssertEqual(Wire.event(state, op: Mutation.push(entry("blue")).op).text,
                       "EVENT 2 push /green/blue:hello%20world\n")
        XCTAssertEqual(Wire.event(RoomState(stack: [entry("green")], revision: 3), op: Mutation.pop.op).text,
                       "EVENT 3 pop /green\n")
    }

    func test_wire_error_isCodeAndMessage() {
        XCTAssertEqual(Wire.error(ProtocolError(.conflict, "current=3")).text, "ERR conflict current=3\n")
        XCTAssertEqual(Wire.error(ProtocolError(.unknownScreen, "no screen named 'purple'")).text,
                       "ERR unknown-screen no screen named 'purple'\n")
    }

    func test_wire_errorMessageWithNewlines_isFlattened() {
        XCTAssertEqual(Wire.error(ProtocolError(.badArgs, "a\nb\r\nc\rd")).text, "ERR bad-args a b c d\n")
        XCTAssertEqual(Wire.error(ProtocolError(.internal, "disk\nERR forged line")).text,
                       "ERR internal disk ERR forged line\n")
    }

    func test_errorCode_rawValues_matchContract() {
        XCTAssertEqual(ErrorCode.allCases.map(\.rawValue), [
            "unknown-command", "bad-args", "unknown-screen", "bad-route", "at-root", "no-next", "conflict",
            "line-too-long", "bad-encoding", "auth-required", "auth-failed", "limit", "no-sheet", "busy", "forbidden", "unavailable", "internal",
        ])
    }

    func test_wire_screens_builtInCatalogExactLines() {
        XCTAssertEqual(Wire.screens(.builtIn).text, """
            SCREEN red red green none Red
            SCREEN green green blue none Green
            SCREEN blue blue red optional Blue
            END

            """)
    }

    // A title can no longer hold a line break (the catalog refuses it), so
    // only the dash for "no next" is left to show here.
    func test_wire_screens_customCatalogShowsDashForNoNext() throws {
        let catalog = try Catalog(initial: "a", screens: [
            Screen(name: "a", title: "View A", color: .cyan, next: "b"),
            Screen(name: "b", title: "Two  words", color: .magenta, data: .required),
        ])
        XCTAssertEqual(Wire.screens(catalog).text, "SCREEN a cyan b none View A\nSCREEN b magenta - required Two  words\nEND\n")
    }

    func test_wire_pong_echoesTextOrNothing() {
        XCTAssertEqual(Wire.pong("").text, "PONG\n")
        XCTAssertEqual(Wire.pong("hello  world").text, "PONG hello  world\n")
        XCTAssertEqual(Wire.pong("caf\u{E9}").text, "PONG caf\u{E9}\n")
    }

    func test_wire_hello_namesProtocolAndServerVersion() {
        XCTAssertEqual(Wire.hello(serverVersion: "0.1.0").text, "HELLO navsync 1 0.1.0\n")
    }

    func test_wire_bye_isBye() {
        XCTAssertEqual(Wire.bye.text, "BYE\n")
    }

    func test_wire_stats_listsFiguresThenEnd() {
        XCTAssertEqual(Wire.stats([(key: "version", value: "0.1.0"), (key: "rooms", value: "2")]).text,
                       "STAT version 0.1.0\nSTAT rooms 2\nEND\n")
        XCTAssertEqual(Wire.stats([]).text, "END\n")
        XCTAssertEqual(Wire.stats([(key: "note", value: "a\nb")]).text, "STAT note a b\nEND\n")
    }

    func test_wire_rooms_listsNameRevRouteThenEnd() {
        let rooms = [(name: "a", state: RoomState(stack: [RouteEntry(screen: "red")], revision: 3)),
                     (name: "b.2", state: RoomState(stack: [RouteEntry(screen: "red"), RouteEntry(screen: "blue", data: "x y")],
                                                    revision: 12))]
        XCTAssertEqual(Wire.rooms(rooms).text, "ROOM a 3 /red\nROOM b.2 12 /red/blue:x%20y\nEND\n")
        XCTAssertEqual(Wire.rooms([]).text, "END\n")
    }

    func test_wire_help_isLinesThenEndAndNamesEveryVerb() {
        let text = Wire.help().text
        XCTAssertTrue(text.hasSuffix("\nEND\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.filter { $0 == "END" }.count, 1, "END appears once, last")
        XCTAssertFalse(lines.contains(""), "no empty lines")
        for verb in ["GET", "SELECT", "PUSH", "POP", "ROOT", "NEXT", "OPEN", "IF", "WATCH", "UNWATCH", "JOIN",
                     "SCREENS", "STATS", "ROOMS", "PING", "HELLO", "AUTH", "QUIT", "HELP"] {
            XCTAssertTrue(text.contains(verb), "HELP mentions \(verb)")
        }
    }

    func test_wire_everyLine_endsWithBareNewline() {
        let outputs: [[UInt8]] = [
            Wire.ok(1), Wire.state(RoomState(stack: [entry("red")], revision: 1)),
            Wire.event(RoomState(stack: [entry("red")], revision: 1), op: "select"),
            Wire.error(ProtocolError(.busy, "too many\r\nconnections")), Wire.pong("x"),
            Wire.hello(serverVersion: "1.0"), Wire.bye, Wire.screens(.builtIn), Wire.help(),
        ]
        for bytes in outputs {
            XCTAssertEqual(bytes.last, UInt8(ascii: "\n"), bytes.text)
            XCTAssertFalse(bytes.contains(UInt8(ascii: "\r")), bytes.text.debugDescription)
        }
    }

    func test_wire_continueCatalogAndMessages_areTheContractsLines() {
        XCTAssertEqual(Wire.continued(after: 41).text, "CONTINUE 41\n")
        XCTAssertEqual(Wire.catalogChanged.text, "CATALOG\n")
        XCTAssertEqual(Wire.messages(.builtIn).text, Catalog.builtIn.screens.map { "MESSAGE \($0.name) \($0.message)\n" }.joined() + "END\n")
        XCTAssertEqual(Wire.state(RoomState(navigation("/red#blue:x"), revision: 3)).text, "STATE 3 /red#blue:x\n")
    }
}
