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
        XCTAssertTrue(Server.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(Server.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        XCTAssertFalse(Server.constantTimeEqual(Array("abc".utf8), Array("abcd".utf8)))
        XCTAssertFalse(Server.constantTimeEqual(Array("abc".utf8), Array("ab".utf8)))
        XCTAssertFalse(Server.constantTimeEqual([], Array("a".utf8)))
        XCTAssertTrue(Server.constantTimeEqual([], []))
        XCTAssertFalse(Server.constantTimeEqual([0], []))
    }
}
