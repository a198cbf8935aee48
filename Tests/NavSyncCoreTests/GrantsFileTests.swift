import NavSyncCore
import XCTest

/// The `--tokens` file: what a line may hold, and how a bad one is named.
final class GrantsFileTests: XCTestCase {
    private let tokenA = "aaaaaaaaaaaaaaaa"
    private let tokenB = "bbbbbbbbbbbbbbbb-#x"

    private func parse(_ text: String) -> Result<[GrantsFile.Entry], GrantsFile.Problem> {
        GrantsFile.parse(Array(text.utf8))
    }

    func test_grantsFile_goodLines_giveRoleRoomsTokenAndName() throws {
        let text = """
            # presenters
            control * \(tokenA) ada

            \tview\tlobby,main,lobby \t\(tokenB)\r
              # an indented comment
            """
        let entries = try parse(text).get()
        XCTAssertEqual(entries, [
            GrantsFile.Entry(token: tokenA, grant: Grant(role: .control, rooms: .every, name: "ada")),
            GrantsFile.Entry(token: tokenB, grant: Grant(role: .view, rooms: .only(["lobby", "main"]), name: "view")),
        ])
        XCTAssertEqual(entries[1].grant.roomsText, "lobby,main")
    }

    func test_grantsFile_emptyOrCommentsOnly_holdsNoGrant() throws {
        XCTAssertEqual(try parse("").get(), [])
        XCTAssertEqual(try parse("# nothing\n\n   \n").get(), [])
    }

    func test_grantsFile_badLines_nameTheLineAndNeverTheToken() {
        let cases: [(line: String, reason: String)] = [
            ("control *", "expected ROLE ROOMS TOKEN [NAME], found 2 fields"),
            ("control * \(tokenA) ada extra", "expected ROLE ROOMS TOKEN [NAME], found 5 fields"),
            ("admin * \(tokenA)", "the role is control or view"),
            ("none * \(tokenA)", "the role is control or view"),
            ("\(tokenA) * control", "the role is control or view"),
            ("CONTROL * \(tokenA)", "the role is control or view"),
            ("view main,,lobby \(tokenA)", "rooms are * or a comma-separated list"),
            ("view main, \(tokenA)", "rooms are * or a comma-separated list"),
            ("view *,main \(tokenA)", "rooms are * or a comma-separated list"),
            ("view bad! \(tokenA)", "rooms are * or a comma-separated list"),
            ("view \(String(repeating: "r", count: 65)) \(tokenA)", "rooms are * or a comma-separated list"),
            ("view * short", "the token is shorter than 16 characters"),
            ("view * 123456789012345", "the token is shorter than 16 characters"),
            ("view * \(tokenA)\u{7F}", "the token must be printable ASCII"),
            ("view * \(tokenA)é", "the token must be printable ASCII"),
            ("view * \(tokenA) bad/name", "the name is 1-64 characters"),
            ("view * \(tokenA) \(String(repeating: "n", count: 65))", "the name is 1-64 characters"),
        ]
        for (line, reason) in cases {
            let text = "# first\ncontrol * \(tokenB)\n" + line + "\n"
            guard case .failure(let problem) = parse(text) else {
                XCTFail("accepted: \(line)")
                continue
            }
            XCTAssertEqual(problem.line, 3, line)
            XCTAssertTrue(problem.reason.hasPrefix(reason), "\(line): \(problem.reason)")
            XCTAssertFalse(problem.reason.contains(tokenA), line)
            XCTAssertFalse(problem.described(file: "/etc/g").contains(tokenA), line)
            XCTAssertTrue(problem.described(file: "/etc/g").hasPrefix("/etc/g:3: "), line)
        }
    }

    func test_grantsFile_sixteenCharactersIsEnough() throws {
        XCTAssertEqual(try parse("view * 1234567890123456").get().count, 1)
    }

    func test_grantsFile_repeatedToken_namesBothLines() {
        let text = "control * \(tokenA)\n# x\nview main \(tokenA) kiosk\n"
        guard case .failure(let problem) = parse(text) else { return XCTFail("accepted a repeated token") }
        XCTAssertEqual(problem.line, 3)
        XCTAssertEqual(problem.reason, "the token of line 1 again; tokens must be unique")
    }

    func test_grantsFile_invalidUTF8_isABadLine() {
        guard case .failure(let problem) = GrantsFile.parse(Array("control * \(tokenA)\n".utf8) + [0xFF, 0x0A]) else {
            return XCTFail("accepted invalid UTF-8")
        }
        XCTAssertEqual(problem, GrantsFile.Problem(line: 2, reason: "not valid UTF-8"))
    }

    func test_grantsFile_memberNameAllowsAt() throws {
        XCTAssertEqual(try parse("view * \(tokenA) ada@example.org").get()[0].grant.name, "ada@example.org")
    }
}
