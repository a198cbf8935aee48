import Foundation
import RedisServerHarness
import XCTest

/// BACKPLANE.md (1.3): `WATCH <rev>` is judged against the fleet-wide
/// revision. One daemon of two reaches Redis through a relay that holds back
/// its subscription, so its copy of the room is behind the fleet while its
/// commands still reach Redis: a client failing over to it must neither go
/// backwards nor see a change twice.
final class BackplaneResumeTests: XCTestCase {
    private var redis: RedisServerProcess!
    private var relay: RedisRelay!
    /// Daemon 0 talks to Redis directly, daemon 1 through `relay`.
    private var daemons: [DaemonProcess] = []

    override func setUpWithError() throws {
        redis = try RedisServerProcess()
        relay = try RedisRelay(toRedisPort: redis.port)
        daemons.append(try DaemonProcess(arguments: ["--backplane", redis.url]))
        daemons.append(try DaemonProcess(arguments: ["--backplane", relay.url]))
    }

    override func tearDown() {
        daemons.forEach { $0.stop() }
        relay?.stop()
        redis?.remove()
    }

    /// Daemon 1's copy of the main room stays at revision `behind` while
    /// daemon 0 makes `ahead` more changes; returns the client on daemon 0
    /// that made them, and daemon 1's watcher, which has seen up to `behind`.
    private func putDaemonOneBehind(behind: Int, ahead: Int) throws -> (writer: LineClient, lagging: LineClient) {
        let writer = try daemons[0].connect()
        let lagging = try daemons[1].connect()
        XCTAssertEqual(try lagging.request("WATCH"), "STATE 0 /red")
        for n in 1...behind {
            XCTAssertEqual(try writer.request("OPEN /red/blue:\(n)"), "OK \(n)")
            XCTAssertTrue(try lagging.readLine().hasPrefix("EVENT \(n) "), "daemon 1 follows while not held")
        }
        relay.hold()
        for n in (behind + 1)...(behind + ahead) {
            XCTAssertEqual(try writer.request("OPEN /red/blue:\(n)"), "OK \(n)")
        }
        // The relay holds what Redis publishes, not daemon 1's commands: its GET still shows the old copy.
        XCTAssertEqual(try daemons[1].connect().request("GET"), "STATE \(behind) /red/blue:\(behind)")
        return (writer, lagging)
    }

    func test_watchRev_onDaemonBehindTheFleet_continuesFromRev_neverBackwards_noChangeTwice() throws {
        let (writer, lagging) = try putDaemonOneBehind(behind: 2, ahead: 3)
        // A client that had applied revision 5 through daemon 0 fails over to daemon 1.
        let resumed = try daemons[1].connect()
        XCTAssertEqual(try resumed.request("WATCH 5"), "CONTINUE 5", "caught up with the fleet before answering")
        // The copy caught up for it, so every later read there shows revision 5 at least.
        XCTAssertEqual(try daemons[1].connect().request("GET"), "STATE 5 /red/blue:5")
        // Daemon 1's earlier watcher got the missed changes from the catch-up, in order, once.
        XCTAssertEqual(try lagging.readLines(3).map { String($0.prefix(7)) }, ["EVENT 3", "EVENT 4", "EVENT 5"])
        relay.release()
        XCTAssertEqual(try writer.request("OPEN /red/blue:6"), "OK 6")
        XCTAssertEqual(try writer.request("OPEN /red/blue:7"), "OK 7")
        // The held messages of revisions 3 to 5 arrive now and are known already: neither client sees them again.
        XCTAssertEqual(try resumed.readLines(2), ["EVENT 6 open /red/blue:6", "EVENT 7 open /red/blue:7"])
        XCTAssertEqual(try lagging.readLines(2), ["EVENT 6 open /red/blue:6", "EVENT 7 open /red/blue:7"])
    }

    func test_watchRev_onDaemonBehind_rangeInBetween_getsTheEventsAfterRevOnly() throws {
        let (writer, _) = try putDaemonOneBehind(behind: 1, ahead: 4)
        let resumed = try daemons[1].connect()
        // Revision 3 is past daemon 1's copy (1) and behind the fleet (5).
        XCTAssertEqual(try resumed.request("WATCH 3"), "CONTINUE 3")
        XCTAssertEqual(try resumed.readLines(2), ["EVENT 4 open /red/blue:4", "EVENT 5 open /red/blue:5"])
        relay.release()
        // The held messages come before this change's on the channel: a replay of them would show first.
        XCTAssertEqual(try writer.request("OPEN /red/blue:6"), "OK 6")
        XCTAssertEqual(try resumed.readLine(), "EVENT 6 open /red/blue:6")
    }

    func test_watchRev_pastTheFleetItself_answersStateResync() throws {
        _ = try putDaemonOneBehind(behind: 1, ahead: 1)
        // Nobody in the fleet has revision 9: a full resync, from the caught-up copy.
        XCTAssertEqual(try daemons[1].connect().request("WATCH 9"), "STATE 2 /red/blue:2")
        relay.release()
    }
}
