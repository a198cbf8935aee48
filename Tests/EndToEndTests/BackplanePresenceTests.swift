import ChildProcessHarness
import Foundation
import RedisServerHarness
import XCTest

/// Presence across a fleet on a real redis-server (BACKPLANE.md):
/// every daemon lists every daemon's members, a `kill -9`'d daemon's
/// members are reported gone within 15 s, and the members are written
/// again after Redis lost its data.
final class BackplanePresenceTests: XCTestCase {
    /// A member named `name` watching main on `daemon`; returns the connection and its id.
    private func member(_ name: String, on daemon: DaemonProcess) throws -> (LineClient, String) {
        let client = try daemon.connect()
        let id = String(try client.request("WHOAMI").split(separator: " ")[1])
        XCTAssertEqual(try client.request("NAME \(name)"), "OK 0")
        XCTAssertEqual(try client.request("WATCH"), "STATE 0 /red")
        return (client, id)
    }

    /// Reads lines until `wanted` (bounded); returns every line read.
    private func read(_ client: LineClient, until wanted: (String) -> Bool, timeout: TimeInterval = 20) throws -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while lines.last.map(wanted) != true {
            lines.append(try client.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)))
        }
        return lines
    }

    private func figure(_ key: String, of daemon: DaemonProcess) throws -> String? {
        let client = try daemon.connect()
        defer { client.close() }
        return try client.requestList("STATS").first { $0.hasPrefix("STAT \(key) ") }?.split(separator: " ")[2].description
    }

    func test_fleet_membersOfEveryDaemonListedEverywhere_andAKilledDaemonsMembersGone() throws {
        let fleet = try Fleet(3)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let follower = try daemons[0].connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        var members: [(LineClient, String)] = []
        for (index, name) in ["ana", "ben", "cleo"].enumerated() { members.append(try member(name, on: daemons[index])) }
        let ids = members.map(\.1)
        XCTAssertEqual(Set(ids).count, 3, "ids are unique across the fleet")
        // Each daemon publishes its own member, so the three may arrive in any
        // order: read until all three are in, and nothing else came with them.
        let expected: Set = ["MEMBER \(ids[0]) ana control -", "MEMBER \(ids[1]) ben control -",
                             "MEMBER \(ids[2]) cleo control -"]
        var arrivals: [String] = []
        while !expected.isSubset(of: Set(arrivals)) {
            arrivals += try read(follower, until: { expected.contains($0) })
        }
        XCTAssertEqual(Set(arrivals), expected)
        XCTAssertEqual(arrivals.count, 3, "\(arrivals)")

        // Changes on daemon 1 reach the follower on daemon 0, in order (one
        // at a time: changes within one loop turn are coalesced to the last).
        for at in ["/green", "/blue:x", "-"] {
            XCTAssertEqual(try members[1].0.request("AT \(at)"), "OK 0")
            XCTAssertEqual(try follower.readLine(timeout: 10), "MEMBER \(ids[1]) ben control \(at)")
        }
        for daemon in daemons {
            let who = try daemon.connect()
            XCTAssertEqual(Set(try who.requestList("WHO").dropLast()),
                           ["MEMBER \(ids[0]) ana control -", "MEMBER \(ids[1]) ben control -", "MEMBER \(ids[2]) cleo control -"])
            who.close()
            XCTAssertEqual(try figure("members_total", of: daemon), "3")
            XCTAssertEqual(try figure("watchers_total", of: daemon), "1", "watchers stay this daemon's own")
        }

        // kill -9 of daemon 2: its member is GONE on the others within 15 s.
        let killedAt = Date()
        kill(daemons[2].pid, SIGKILL)
        XCTAssertNotNil(daemons[2].waitForExit(5))
        XCTAssertEqual(try follower.readLine(timeout: 20), "GONE \(ids[2])")
        let seconds = Date().timeIntervalSince(killedAt)
        print("backplane presence: kill -9 to GONE on another daemon in \(String(format: "%.2f", seconds)) s")
        XCTAssertLessThan(seconds, 15)
        XCTAssertTrue(try waitUntil(timeout: 10) { try self.figure("members_total", of: daemons[1]) == "2" })
    }

    func test_fleet_redisLostItsData_membersWrittenAgain_followersGetAListing() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let follower = try daemons[0].connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        let (ana, id) = try member("ana", on: daemons[1])
        defer { ana.close() }
        XCTAssertEqual(try follower.readLine(timeout: 10), "MEMBER \(id) ana control -")

        _ = try fleet.redis.cli(["FLUSHALL"])
        // Both daemons notice the new epoch, reconnect, read the members again and
        // write their own back; the follower is sent a whole listing with ana in it.
        let lines = try read(follower, until: { $0 == "END" }, timeout: 20)
        XCTAssertTrue(lines.contains("PRESENCE"), "\(lines)")
        var listing = Array(lines.suffix(from: lines.lastIndex(of: "PRESENCE")!))
        if !listing.contains("MEMBER \(id) ana control -") {
            // Daemon 0 may have read before daemon 1 wrote ana back: her arrival follows.
            listing += [try follower.readLine(timeout: 10)]
        }
        XCTAssertTrue(listing.contains("MEMBER \(id) ana control -"), "\(listing)")
        XCTAssertTrue(try waitUntil(timeout: 10) {
            try fleet.redis.cli(["HKEYS", "navsync:{main}:members"]).contains(id)
        }, "ana is in redis again")
    }
}
