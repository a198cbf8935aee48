import XCTest
import NavSyncCore
@testable import NavSyncServer

/// `IF <rev>` and the order in which a mutation's errors are judged.
final class ConflictTests: XCTestCase {
    /// A hub whose main room is at revision 5, stack /red/green.
    private func roomAtRevisionFive() throws -> (Hub, Client) {
        let hub = try Hub(rooms: ["main": RoomState(stack: stack("/red/green"), revision: 5)])
        return (hub, hub.connect())
    }

    func test_if_mismatchIsConflictWithCurrentRevision() throws {
        let (_, client) = try roomAtRevisionFive()
        XCTAssertEqual(client.run("IF 4 SELECT blue"), ["ERR conflict current=5"])
        XCTAssertEqual(client.run("IF 6 POP"), ["ERR conflict current=5"])
        XCTAssertEqual(client.run("GET"), ["STATE 5 /red/green"])
    }

    func test_if_matchRunsTheMutation() throws {
        let (hub, client) = try roomAtRevisionFive()
        let watcher = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(client.run("IF 5 PUSH blue x"), ["OK 6"])
        XCTAssertEqual(client.run("if 6 pop"), ["OK 7"])
        XCTAssertEqual(watcher.run(), ["EVENT 6 push /red/green/blue:x", "EVENT 7 pop /red/green"])
    }

    func test_if_noopAtMatchingRevisionKeepsRevision() throws {
        let (_, client) = try roomAtRevisionFive()
        XCTAssertEqual(client.run("IF 5 OPEN /red/green"), ["OK 5"])
        XCTAssertEqual(client.run("IF 4 OPEN /red/green"), ["ERR conflict current=5"])
    }

    func test_orderOfChecks_parseErrorsComeBeforeConflict() throws {
        let (_, client) = try roomAtRevisionFive()
        func code(_ line: String) -> String {
            let reply = client.run(line)
            XCTAssertEqual(reply.count, 1, line)
            return reply[0].split(separator: " ").prefix(2).joined(separator: " ")
        }
        XCTAssertEqual(code("IF 0 SELECT purple"), "ERR unknown-screen")
        XCTAssertEqual(code("IF 0 SELECT"), "ERR bad-args")
        XCTAssertEqual(code("IF 0 SELECT red data"), "ERR bad-args")
        XCTAssertEqual(code("IF 0 OPEN /"), "ERR bad-route")
        XCTAssertEqual(code("IF 0 OPEN /red/blue:%G1"), "ERR bad-route")
        XCTAssertEqual(code("IF 0 FLY"), "ERR unknown-command")
        XCTAssertEqual(code("IF 0 GET"), "ERR bad-args")
        XCTAssertEqual(code("IF 0 IF 5 POP"), "ERR bad-args")
        XCTAssertEqual(code("IF x POP"), "ERR bad-args")
    }

    func test_orderOfChecks_conflictComesBeforeStateErrors() throws {
        let hub = try Hub(rooms: ["main": RoomState(stack: stack("/red"), revision: 5)])
        let client = hub.connect()
        // POP on a one-entry stack is at-root, but the revision is judged first.
        XCTAssertEqual(client.run("IF 0 POP"), ["ERR conflict current=5"])
        XCTAssertEqual(client.run("IF 5 POP").first?.hasPrefix("ERR at-root"), true)
    }

    func test_orderOfChecks_openPastDepthIsLimitBeforeConflict() throws {
        let hub = try Hub(limits: limits(maxDepth: 3), rooms: ["main": RoomState(stack: stack("/red"), revision: 5)])
        let client = hub.connect()
        XCTAssertEqual(client.run("IF 0 OPEN /red/red/red/red").first?.hasPrefix("ERR limit"), true)
        XCTAssertEqual(client.run("IF 0 OPEN /red/red/red"), ["ERR conflict current=5"])
    }

    func test_orderOfChecks_nextDataRuleIsJudgedAfterConflict() throws {
        let hub = try Hub(catalog: flowCatalog, rooms: ["main": RoomState(stack: stack("/viewA"), revision: 2)])
        let client = hub.connect()
        // viewB requires data, but NEXT's target depends on the state.
        XCTAssertEqual(client.run("IF 1 NEXT"), ["ERR conflict current=2"])
        XCTAssertEqual(client.run("IF 2 NEXT").first?.hasPrefix("ERR bad-args"), true)
        XCTAssertEqual(client.run("IF 2 NEXT from A"), ["OK 3"])
        XCTAssertEqual(client.run("GET"), ["STATE 3 /viewB:from%20A"])
    }
}
