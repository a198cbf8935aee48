import XCTest
import NavSyncCore

final class CommandParserTests: XCTestCase {
    private let parser = CommandParser(catalog: .builtIn, maxDepth: 64)

    /// The command a line parses to; records a failure (and returns nil) for
    /// an error or a blank line.
    private func command(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Command? {
        switch parser.parse(Array(text.utf8)) {
        case .success(let command)?:
            return command
        case .failure(let error)?:
            XCTFail("\(text.debugDescription) was refused: \(error.code.rawValue) \(error.message)", file: file, line: line)
            return nil
        case nil:
            XCTFail("\(text.debugDescription) was treated as blank", file: file, line: line)
            return nil
        }
    }

    private func errorCode(_ text: String) -> ErrorCode? {
        if case .failure(let error)? = parser.parse(Array(text.utf8)) { return error.code }
        return nil
    }

    private func entry(_ screen: String, _ data: String? = nil) -> RouteEntry {
        RouteEntry(screen: screen, data: data)
    }

    // MARK: - Every verb

    func test_parser_get_parses() {
        XCTAssertEqual(command("GET"), .get)
    }

    func test_parser_select_parsesWithAndWithoutData() {
        XCTAssertEqual(command("SELECT red"), .mutate(.select(entry("red")), ifRevision: nil))
        XCTAssertEqual(command("SELECT blue a note"), .mutate(.select(entry("blue", "a note")), ifRevision: nil))
    }

    func test_parser_push_parsesWithAndWithoutData() {
        XCTAssertEqual(command("PUSH green"), .mutate(.push(entry("green")), ifRevision: nil))
        XCTAssertEqual(command("PUSH blue hello world"),
                       .mutate(.push(entry("blue", "hello world")), ifRevision: nil))
    }

    func test_parser_popAndRoot_parse() {
        XCTAssertEqual(command("POP"), .mutate(.pop, ifRevision: nil))
        XCTAssertEqual(command("ROOT"), .mutate(.root, ifRevision: nil))
    }

    func test_parser_next_parsesWithAndWithoutData() {
        XCTAssertEqual(command("NEXT"), .mutate(.next(data: nil), ifRevision: nil))
        XCTAssertEqual(command("NEXT some data"), .mutate(.next(data: "some data"), ifRevision: nil))
    }

    func test_parser_open_decodesRoute() {
        XCTAssertEqual(command("OPEN /red/blue:hello%20world"),
                       .mutate(.open([entry("red"), entry("blue", "hello world")]), ifRevision: nil))
        XCTAssertEqual(command("OPEN /green"), .mutate(.open([entry("green")]), ifRevision: nil))
    }

    func test_parser_watchUnwatchScreensStatsQuitHelp_parse() {
        XCTAssertEqual(command("WATCH"), .watch(after: nil))
        XCTAssertEqual(command("UNWATCH"), .unwatch)
        XCTAssertEqual(command("SCREENS"), .screens)
        XCTAssertEqual(command("STATS"), .stats)
        XCTAssertEqual(command("rooms"), .rooms)
        XCTAssertEqual(command("QUIT"), .quit)
        XCTAssertEqual(command("HELP"), .help)
    }

    func test_parser_join_parsesValidRoomNames() {
        XCTAssertEqual(command("JOIN main"), .join(room: "main"))
        XCTAssertEqual(command("JOIN Kitchen.Tablet-2_b"), .join(room: "Kitchen.Tablet-2_b"))
        let longest = String(repeating: "r", count: 64)
        XCTAssertEqual(command("JOIN \(longest)"), .join(room: longest))
    }

    func test_parser_join_badRoomNamesAreToldTheNamingRule() {
        let rule = "room names are 1-64 characters of A-Z a-z 0-9 _ . -"
        let table: [(line: String, message: String)] = [
            ("JOIN bad room", rule),
            ("JOIN bad\troom", rule),
            ("JOIN a b c", rule),
            ("JOIN bad/room", rule),
            ("JOIN caf\u{E9}", rule),
            ("JOIN " + String(repeating: "r", count: 65), rule),
            ("JOIN", "usage: JOIN <room>"),
            ("JOIN   ", "usage: JOIN <room>"),
        ]
        for (line, message) in table {
            XCTAssertEqual(parser.parse(Array(line.utf8)), .failure(ProtocolError(.badArgs, message)), line)
        }
        XCTAssertEqual(command("JOIN  lobby  "), .join(room: "lobby"), "blanks around the name are still fine")
    }

    func test_parser_ping_echoesTextTrimmed() {
        XCTAssertEqual(command("PING"), .ping(text: ""))
        XCTAssertEqual(command("PING hello"), .ping(text: "hello"))
        XCTAssertEqual(command("PING \t hello  there \t"), .ping(text: "hello  there"))
        XCTAssertEqual(command("PING    "), .ping(text: ""))
    }

    func test_parser_hello_acceptsNoVersionOrVersionOne() {
        XCTAssertEqual(command("HELLO"), .hello(version: nil))
        XCTAssertEqual(command("HELLO 1"), .hello(version: "1"))
    }

    func test_parser_auth_takesToken() {
        XCTAssertEqual(command("AUTH s3cret"), .auth(token: "s3cret"))
        XCTAssertEqual(command("AUTH   s3cret  "), .auth(token: "s3cret"))
    }

    // MARK: - Case and separators

    func test_parser_verbs_areCaseInsensitive() {
        for text in ["select red", "SELECT red", "Select red", "sElEcT red"] {
            XCTAssertEqual(command(text), .mutate(.select(entry("red")), ifRevision: nil), text)
        }
        XCTAssertEqual(command("get"), .get)
        XCTAssertEqual(command("Watch"), .watch(after: nil))
        XCTAssertEqual(command("push blue x"), .mutate(.push(entry("blue", "x")), ifRevision: nil))
        XCTAssertEqual(command("open /green"), .mutate(.open([entry("green")]), ifRevision: nil))
        XCTAssertEqual(command("if 4 pop"), .mutate(.pop, ifRevision: 4))
        XCTAssertEqual(command("If 4 Next"), .mutate(.next(data: nil), ifRevision: 4))
        XCTAssertEqual(command("join lobby"), .join(room: "lobby"))
        XCTAssertEqual(command("hello 1"), .hello(version: "1"))
        XCTAssertEqual(command("ping x"), .ping(text: "x"))
    }

    func test_parser_verbs_matchOnlyAsciiCase() {
        // Unicode case mapping would turn these into SELECT and IF.
        XCTAssertEqual(errorCode("\u{17F}elect red"), .unknownCommand)  // long s
        XCTAssertEqual(errorCode("\u{131}f 3 POP"), .unknownCommand)    // dotless i
        XCTAssertEqual(errorCode("IF 3 \u{17F}elect red"), .unknownCommand)
    }

    func test_parser_screenNames_areCaseSensitive() {
        XCTAssertEqual(errorCode("SELECT Red"), .unknownScreen)
        XCTAssertEqual(errorCode("SELECT RED"), .unknownScreen)
        XCTAssertEqual(errorCode("PUSH Blue"), .unknownScreen)
        XCTAssertEqual(errorCode("OPEN /red/Green"), .unknownScreen)
    }

    func test_parser_roomNames_keepTheirCase() {
        XCTAssertEqual(command("JOIN MixedCase"), .join(room: "MixedCase"))
    }

    func test_parser_tabsAndRunsOfBlanks_separateTokens() {
        XCTAssertEqual(command("\tPUSH \t blue\t\thello"), .mutate(.push(entry("blue", "hello")), ifRevision: nil))
        XCTAssertEqual(command("  GET  "), .get)
        XCTAssertEqual(command("GET\t"), .get)
        XCTAssertEqual(command("  IF\t 4 \t SELECT   red  "), .mutate(.select(entry("red")), ifRevision: 4))
        XCTAssertEqual(command("OPEN\t\t/red/green\t"), .mutate(.open([entry("red"), entry("green")]), ifRevision: nil))
        XCTAssertEqual(command("JOIN \t lobby \t"), .join(room: "lobby"))
    }

    func test_parser_combiningMarkAfterBlank_stillSeparates() {
        // U+0301 would merge with the preceding space into one Character.
        XCTAssertEqual(command("PUSH blue \u{301}x"), .mutate(.push(entry("blue", "\u{301}x")), ifRevision: nil))
        XCTAssertEqual(errorCode("GET \u{301}"), .badArgs)
    }

    // MARK: - Data

    func test_parser_data_isRestOfLineVerbatimTrimmed() {
        XCTAssertEqual(command("PUSH blue   hello  world  "),
                       .mutate(.push(entry("blue", "hello  world")), ifRevision: nil))
        XCTAssertEqual(command("PUSH blue a\tb"), .mutate(.push(entry("blue", "a\tb")), ifRevision: nil))
        XCTAssertEqual(command("SELECT blue /with:colons/and%20percent+plus"),
                       .mutate(.select(entry("blue", "/with:colons/and%20percent+plus")), ifRevision: nil),
                       "input data is not percent-decoded")
        XCTAssertEqual(command("NEXT  keep   inner   runs "), .mutate(.next(data: "keep   inner   runs"), ifRevision: nil))
    }

    func test_parser_data_keepsUtf8() {
        let text = "caf\u{E9} \u{65E5}\u{672C} \u{1F389}"
        XCTAssertEqual(command("PUSH blue \t\(text)\t"), .mutate(.push(entry("blue", text)), ifRevision: nil))
        XCTAssertEqual(command("NEXT \(text)"), .mutate(.next(data: text), ifRevision: nil))
    }

    func test_parser_emptyData_isSameAsNone() {
        let none = Command.mutate(.push(entry("blue")), ifRevision: nil)
        XCTAssertEqual(command("PUSH blue"), none)
        XCTAssertEqual(command("PUSH blue   "), none)
        XCTAssertEqual(command("PUSH blue \t "), none)
        XCTAssertEqual(command("SELECT red  \t"), .mutate(.select(entry("red")), ifRevision: nil),
                       "blank data is no data, so a data-none screen accepts it")
        XCTAssertEqual(command("NEXT \t  "), .mutate(.next(data: nil), ifRevision: nil))
        XCTAssertEqual(command("OPEN /blue:"), .mutate(.open([entry("blue")]), ifRevision: nil))
        if case .mutate(.push(let pushed), _)? = command("PUSH blue  ") {
            XCTAssertNil(pushed.data)
        }
    }

    // MARK: - IF

    func test_parser_if_guardsEveryMutation() {
        XCTAssertEqual(command("IF 0 SELECT red"), .mutate(.select(entry("red")), ifRevision: 0))
        XCTAssertEqual(command("IF 7 PUSH blue hi there"), .mutate(.push(entry("blue", "hi there")), ifRevision: 7))
        XCTAssertEqual(command("IF 7 POP"), .mutate(.pop, ifRevision: 7))
        XCTAssertEqual(command("IF 7 ROOT"), .mutate(.root, ifRevision: 7))
        XCTAssertEqual(command("IF 7 NEXT  data  here "), .mutate(.next(data: "data  here"), ifRevision: 7))
        XCTAssertEqual(command("IF 7 OPEN /red/blue:x"),
                       .mutate(.open([entry("red"), entry("blue", "x")]), ifRevision: 7))
    }

    func test_parser_if_acceptsFullUInt64Range() {
        XCTAssertEqual(command("IF 18446744073709551615 POP"), .mutate(.pop, ifRevision: UInt64.max))
    }

    func test_parser_ifWithBadRevisionAndUnknownScreen_isBadArgs() {
        // The revision is read before the mutation is looked at.
        XCTAssertEqual(errorCode("IF x SELECT purple"), .badArgs)
        XCTAssertEqual(errorCode("IF x FROB"), .badArgs)
        XCTAssertEqual(errorCode("IF 3 SELECT purple"), .unknownScreen)
    }

    // MARK: - Blank lines

    func test_parser_blankLine_isIgnored() {
        for text in ["", " ", "\t", " \t  \t"] {
            XCTAssertNil(parser.parse(Array(text.utf8)), text.debugDescription)
        }
    }

    // MARK: - Route depth and catalogs

    func test_parser_openAtExactlyMaxDepth_isAccepted() {
        let small = CommandParser(catalog: .builtIn, maxDepth: 3)
        guard case .success(.mutate(.open(let route), nil))? = small.parse(Array("OPEN /red/green/blue".utf8)) else {
            return XCTFail("a route of exactly max depth was refused")
        }
        XCTAssertEqual(route.depth, 3)
        guard case .failure(let error)? = small.parse(Array("OPEN /red/green/blue/red".utf8)) else {
            return XCTFail("a route over max depth was accepted")
        }
        XCTAssertEqual(error.code, .limit)
    }

    func test_parser_customCatalog_requiredDataIsEnforced() throws {
        let catalog = try Catalog(initial: "a", screens: [
            Screen(name: "a", title: "A", color: .cyan, next: "b"),
            Screen(name: "b", title: "B", color: .magenta, data: .required),
        ])
        let custom = CommandParser(catalog: catalog, maxDepth: 8)
        guard case .failure(let missing)? = custom.parse(Array("PUSH b".utf8)) else {
            return XCTFail("PUSH of a required-data screen without data was accepted")
        }
        XCTAssertEqual(missing.code, .badArgs)
        guard case .failure(let missingInRoute)? = custom.parse(Array("OPEN /a/b".utf8)) else {
            return XCTFail("OPEN of a required-data screen without data was accepted")
        }
        XCTAssertEqual(missingInRoute.code, .badArgs)
        XCTAssertEqual(custom.parse(Array("PUSH b x".utf8)), .success(.mutate(.push(entry("b", "x")), ifRevision: nil)))
        XCTAssertEqual(custom.parse(Array("OPEN /a/b:x".utf8)),
                       .success(.mutate(.open([entry("a"), entry("b", "x")]), ifRevision: nil)))
    }

    // MARK: - Before AUTH

    func test_parser_unauthenticated_refusesEveryVerbButTheFiveBeforeParsing() {
        let refused = ["GET", "IF 3 SELECT nosuch", "SELECT nosuch", "PUSH red x", "OPEN %%%", "JOIN bad room",
                       "FROB", "WHOAMIX", "HELP", "watch x"]
        for line in refused {
            XCTAssertEqual(parser.parse(Array(line.utf8), authenticated: false), .failure(CommandParser.authRequired), line)
        }
        XCTAssertEqual(parser.parse(Array("PING hi".utf8), authenticated: false), .success(.ping(text: "hi")))
        XCTAssertEqual(parser.parse(Array("quit".utf8), authenticated: false), .success(.quit))
        XCTAssertEqual(parser.parse(Array("whoami".utf8), authenticated: false), .success(.whoami))
        XCTAssertEqual(parser.parse(Array("AUTH t".utf8), authenticated: false), .success(.auth(token: "t")))
        XCTAssertEqual(parser.parse(Array("HELLO 1".utf8), authenticated: false), .success(.hello(version: "1")))
        if case .failure(let error)? = parser.parse(Array("HELLO 9".utf8), authenticated: false) {
            XCTAssertEqual(error.code, .badArgs, "an allowed verb gets its own parse errors")
        } else {
            XCTFail("HELLO 9 parsed")
        }
        XCTAssertEqual(parser.parse([0xFF], authenticated: false), .failure(ProtocolError(.badEncoding, "line is not valid UTF-8")))
        XCTAssertNil(parser.parse(Array("   ".utf8), authenticated: false))
    }

    // MARK: - Command properties

    func test_command_allowedBeforeAuth_isAuthPingHelloQuitOnly() {
        let allowed: [Command] = [.auth(token: "t"), .ping(text: ""), .hello(version: nil), .quit]
        let refused: [Command] = [.get, .mutate(.pop, ifRevision: nil), .watch(after: nil), .unwatch, .join(room: "x"),
                                  .screens, .stats, .help]
        for c in allowed { XCTAssertTrue(c.allowedBeforeAuth, "\(c)") }
        for c in refused { XCTAssertFalse(c.allowedBeforeAuth, "\(c)") }
    }

    // MARK: - 1.1 verbs

    func test_parser_presentAndDismiss_parseLikePushAndPop() {
        XCTAssertEqual(command("PRESENT blue a note "), .mutate(.present(entry("blue", "a note")), ifRevision: nil))
        XCTAssertEqual(command("present red"), .mutate(.present(entry("red")), ifRevision: nil))
        XCTAssertEqual(command("DISMISS"), .mutate(.dismiss, ifRevision: nil))
        XCTAssertEqual(command("IF 7 PRESENT green"), .mutate(.present(entry("green")), ifRevision: 7))
        XCTAssertEqual(command("if 7 dismiss"), .mutate(.dismiss, ifRevision: 7))
    }

    func test_parser_openWithSheets_decodesBoth() {
        XCTAssertEqual(command("OPEN /red/green#blue:a%23b#red"),
                       .mutate(.open(Navigation(stack: [entry("red"), entry("green")],
                                                sheets: [entry("blue", "a#b"), entry("red")])), ifRevision: nil))
    }

    func test_parser_openDepth_countsSheets() {
        let small = CommandParser(catalog: .builtIn, maxDepth: 3)
        guard case .success? = small.parse(Array("OPEN /red/green#blue".utf8)) else {
            return XCTFail("three entries with a sheet were refused at depth 3")
        }
        guard case .failure(let error)? = small.parse(Array("OPEN /red/green#blue#red".utf8)) else {
            return XCTFail("four entries with sheets were accepted at depth 3")
        }
        XCTAssertEqual(error.code, .limit)
    }

    func test_parser_watchWithRevision_takesAny64BitNumber() {
        XCTAssertEqual(command("WATCH 0"), .watch(after: 0))
        XCTAssertEqual(command("watch 41"), .watch(after: 41))
        XCTAssertEqual(command("WATCH  18446744073709551615 "), .watch(after: UInt64.max))
        XCTAssertEqual(command("WATCH 007"), .watch(after: 7))
    }

    func test_parser_messages_parses() {
        XCTAssertEqual(command("MESSAGES"), .messages)
    }
}
