import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Tokens: what is allowed before AUTH, and what a wrong token costs.
final class AuthTests: XCTestCase {
    func test_auth_commandsBeforeAuthAreRefused() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        for line in ["GET", "SELECT green", "WATCH", "JOIN x", "STATS", "SCREENS", "HELP", "UNWATCH", "IF 0 POP"] {
            let reply = client.run(line)
            XCTAssertEqual(reply.count, 1, line)
            XCTAssertTrue(reply[0].hasPrefix("ERR auth-required "), "\(line): \(reply[0])")
        }
        XCTAssertEqual(client.run("PING hi"), ["PONG hi"])
        XCTAssertEqual(client.run("HELLO 1"), ["HELLO navsync 1 9.9.9-test"])
        XCTAssertEqual(hub.server.roomStates, [:])
        XCTAssertEqual(client.run("QUIT"), ["BYE"])
        XCTAssertEqual(client.connection.calls.last, "closeAfterSending")
    }

    func test_auth_correctTokenUnlocksCommands() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        XCTAssertEqual(client.run("AUTH wrong"), ["ERR auth-failed wrong token"])
        XCTAssertEqual(client.run("AUTH s3cret"), ["OK 0"])
        XCTAssertEqual(client.run("SELECT green", "GET"), ["OK 1", "STATE 1 /green"])
        XCTAssertEqual(client.run("WATCH"), ["STATE 1 /green"])
        XCTAssertFalse(client.connection.isClosed)
    }

    func test_auth_thirdWrongTokenCloses() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        XCTAssertEqual(client.run("AUTH a"), ["ERR auth-failed wrong token"])
        XCTAssertEqual(client.run("AUTH s3cre"), ["ERR auth-failed wrong token"])
        XCTAssertFalse(client.connection.isClosed)
        // Lines after the third failure in the same read are not run.
        XCTAssertEqual(client.run("AUTH s3cret!", "AUTH s3cret", "PING"), ["ERR auth-failed wrong token"])
        XCTAssertEqual(client.connection.calls.last, "closeAfterSending")
        XCTAssertEqual(hub.server.connectionCount, 0)
        XCTAssertTrue(hub.logged("too many failed AUTH attempts"))
    }

    func test_auth_eachConnectionAuthenticatesOnItsOwn() throws {
        let hub = try Hub(token: "s3cret")
        let a = hub.connect(), b = hub.connect()
        a.run("AUTH s3cret")
        XCTAssertTrue(b.run("GET")[0].hasPrefix("ERR auth-required"))
        XCTAssertEqual(a.run("GET"), ["STATE 0 /red"])
    }

    func test_auth_withoutConfiguredTokenIsBadArgs() throws {
        let hub = try Hub()
        let client = hub.connect()
        let reply = client.run("AUTH anything")
        XCTAssertEqual(reply.count, 1)
        XCTAssertTrue(reply[0].hasPrefix("ERR bad-args "), reply[0])
        XCTAssertEqual(client.run("GET"), ["STATE 0 /red"])
    }

    func test_auth_tokenComparisonIsExact() {
        XCTAssertTrue(AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        XCTAssertFalse(AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abcd".utf8)))
        XCTAssertFalse(AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("ab".utf8)))
        XCTAssertFalse(AccessPolicy.constantTimeEqual([], Array("a".utf8)))
        XCTAssertTrue(AccessPolicy.constantTimeEqual([], []))
        XCTAssertFalse(AccessPolicy.constantTimeEqual([0], []))
    }

    // MARK: - The order of checks before AUTH

    /// Lines for `verb` with good arguments and with bad ones (against the
    /// built-in catalog). Exhaustive, so a new verb must say what it sends.
    private func examples(_ verb: Verb) -> [String] {
        switch verb {
        case .get: return ["GET", "GET extra", "get"]
        case .select: return ["SELECT green", "SELECT nosuch", "SELECT red x", "SELECT", "select blue note"]
        case .push: return ["PUSH blue hi", "PUSH red x", "PUSH nosuch", "PUSH"]
        case .pop: return ["POP", "POP now"]
        case .root: return ["ROOT", "ROOT x"]
        case .next: return ["NEXT", "NEXT data"]
        case .open: return ["OPEN /red/blue:hi", "OPEN /nosuch", "OPEN %%%", "OPEN", "OPEN /red /blue"]
        case .present: return ["PRESENT blue", "PRESENT nosuch", "PRESENT red x"]
        case .dismiss: return ["DISMISS", "DISMISS x"]
        case .guarded: return ["IF 0 POP", "IF 3 SELECT nosuch", "IF x POP", "IF 1 GET", "IF 1 FROB", "IF"]
        case .watch: return ["WATCH", "WATCH 3", "WATCH x", "WATCH 1 2"]
        case .unwatch: return ["UNWATCH", "UNWATCH x"]
        case .join: return ["JOIN lobby", "JOIN bad room", "JOIN bad/room", "JOIN"]
        case .screens: return ["SCREENS", "SCREENS all"]
        case .messages: return ["MESSAGES", "MESSAGES x"]
        case .stats: return ["STATS", "STATS x"]
        case .rooms: return ["ROOMS", "ROOMS x"]
        case .help: return ["HELP", "HELP me"]
        case .name: return ["NAME ada", "NAME bad name", "NAME"]
        case .at: return ["AT /red", "AT -", "AT /nosuch", "AT"]
        case .who: return ["WHO", "WHO x"]
        case .presence: return ["PRESENCE", "PRESENCE OFF", "PRESENCE on"]
        case .ping, .hello, .auth, .quit, .whoami: return []
        }
    }

    func test_auth_everyOtherLineBeforeAuth_isAuthRequiredFirst() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        // Every refused verb of the table, well-formed or not; the verbs of
        // later protocol versions and made-up ones, which this daemon does not know.
        var lines = Verb.allCases.filter { !$0.row.allowedBeforeAuth }.flatMap(examples)
        lines += ["FROB", "frob x y", "\u{17F}ELECT red", "AUTHX s3cret", "PINGS", "  SELECT   nosuch  "]
        XCTAssertGreaterThan(lines.count, 60)
        for line in lines {
            XCTAssertEqual(client.run(line), ["ERR auth-required AUTH <token> first"], line)
        }
        XCTAssertEqual(hub.server.roomStates, [:])
        XCTAssertFalse(client.connection.isClosed)
    }

    func test_auth_beforeAuth_onlyTooLongAndBadEncodingComeFirst() throws {
        let hub = try Hub(limits: limits(maxLine: 64), token: "s3cret")
        let client = hub.connect()
        client.sendRaw("SELECT \(String(repeating: "x", count: 100))\n")
        hub.flush()
        XCTAssertEqual(client.newLines().map { $0.prefix(18) }, ["ERR line-too-long "])
        hub.server.receive([UInt8(ascii: "S"), 0xFF, UInt8(ascii: "\n")], from: client.session)
        hub.flush()
        XCTAssertEqual(client.newLines(), ["ERR bad-encoding line is not valid UTF-8"])
        XCTAssertEqual(client.run(""), [], "a blank line is still ignored")
    }

    func test_auth_allowedVerbsBeforeAuth_stillWorkAndReportTheirOwnErrors() throws {
        let hub = try Hub(token: "s3cret")
        let client = hub.connect()
        XCTAssertEqual(client.run("PING"), ["PONG"])
        XCTAssertEqual(client.run("ping there"), ["PONG there"])
        XCTAssertEqual(client.run("HELLO"), ["HELLO navsync 1 9.9.9-test"])
        XCTAssertTrue(client.run("HELLO 2")[0].hasPrefix("ERR bad-args "))
        XCTAssertEqual(client.run("AUTH"), ["ERR bad-args usage: AUTH <token>"])
        XCTAssertEqual(client.run("auth s3cret"), ["OK 0"])
        // Authenticated, the same lines get their own answers again.
        XCTAssertEqual(client.run("SELECT nosuch"), ["ERR unknown-screen no screen named 'nosuch'; see SCREENS"])
        XCTAssertTrue(client.run("PUSH red x")[0].hasPrefix("ERR bad-args "))
        XCTAssertEqual(client.run("FROB"), ["ERR unknown-command unknown command 'FROB'; try HELP"])
        XCTAssertEqual(client.run("QUIT"), ["BYE"])
    }

    func test_auth_withoutToken_parseErrorsAreAnsweredAsBefore() throws {
        let hub = try Hub()
        let client = hub.connect()
        XCTAssertEqual(client.run("IF 3 SELECT nosuch"), ["ERR unknown-screen no screen named 'nosuch'; see SCREENS"])
        XCTAssertEqual(client.run("FROB"), ["ERR unknown-command unknown command 'FROB'; try HELP"])
    }

    // MARK: - Tokens never reach the log

    func test_auth_debugLogNeverHoldsTheToken() throws {
        let hub = try Hub(token: "s3cret-token")
        let client = hub.connect()
        client.run("AUTH wrong-guess")
        client.run("auth \ts3cret-token-typo ")
        client.run("AUTH s3cret-token")
        client.run("GET")
        let debug = hub.logLines.filter { $0.0 == .debug }.map(\.1)
        XCTAssertTrue(debug.contains { $0.hasSuffix("< AUTH <redacted>") }, "\(debug)")
        XCTAssertTrue(debug.contains { $0.hasSuffix("< auth <redacted>") }, "\(debug)")
        XCTAssertTrue(debug.contains { $0.hasSuffix("< GET") }, "other lines are still logged: \(debug)")
        for (_, line) in hub.logLines {
            XCTAssertFalse(line.contains("s3cret"), line)
            XCTAssertFalse(line.contains("wrong-guess"), line)
        }
    }
}
