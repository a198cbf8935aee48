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
            XCTAssertEqual(try follower.readLine(timeout: 20), "MEMBER \(ids[1]) ben control \(at)")
        }
        let everyone: Set = ["MEMBER \(ids[0]) ana control -", "MEMBER \(ids[1]) ben control -",
                             "MEMBER \(ids[2]) cleo control -"]
        for daemon in daemons {
            let who = try daemon.connect()
            // The follower heard all three through daemon 0; daemons 1 and 2
            // hear each other's arrivals and changes from Redis on their own
            // schedules: each is waited for (bounded), then checked.
            var listed: Set<String> = []
            XCTAssertTrue(try waitUntil {
                listed = Set(try who.requestList("WHO").dropLast())
                return listed == everyone
            }, "\(listed)")
            who.close()
            XCTAssertEqual(try figure("members_total", of: daemon), "3")
            XCTAssertEqual(try figure("watchers_total", of: daemon), "1", "watchers stay this daemon's own")
        }

        // kill -9 of daemon 2: its member is GONE on the others within 15 s.
        let killedAt = Date()
        kill(daemons[2].pid, SIGKILL)
        XCTAssertNotNil(daemons[2].waitForExit(20))
        XCTAssertEqual(try follower.readLine(timeout: 20), "GONE \(ids[2])")
        let seconds = Date().timeIntervalSince(killedAt)
        print("backplane presence: kill -9 to GONE on another daemon in \(String(format: "%.2f", seconds)) s")
        XCTAssertLessThan(seconds, 15)
        XCTAssertTrue(try waitUntil(timeout: 20) { try self.figure("members_total", of: daemons[1]) == "2" })
    }

    func test_fleet_redisLostItsData_membersWrittenAgain_followersGetAListing() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let follower = try daemons[0].connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        let (ana, id) = try member("ana", on: daemons[1])
        defer { ana.close() }
        XCTAssertEqual(try follower.readLine(timeout: 20), "MEMBER \(id) ana control -")

        _ = try fleet.redis.cli(["FLUSHALL"])
        // Both daemons notice the new epoch, reconnect, read the members again and
        // write their own back; the follower is sent a whole listing with ana in it.
        var lines = try read(follower, until: { $0 == "END" }, timeout: 20)
        guard let listed = lines.lastIndex(of: "PRESENCE") else { return XCTFail("no listing after the flush: \(lines)") }
        let anaLine = "MEMBER \(id) ana control -"
        if !lines[listed...].contains(anaLine) {
            // Daemon 0 may have read before daemon 1 wrote ana back: her
            // arrival follows, live or in a later listing (read until it).
            lines += try read(follower, until: { $0 == anaLine }, timeout: 20)
        }
        XCTAssertTrue(lines[lines.lastIndex(of: "PRESENCE")!...].contains(anaLine), "\(lines)")
        XCTAssertTrue(try waitUntil(timeout: 20) {
            try fleet.redis.cli(["HKEYS", "navsync:{main}:members"]).contains(id)
        }, "ana is in redis again")
    }
}
