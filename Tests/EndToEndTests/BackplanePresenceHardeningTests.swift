import ChildProcessHarness
import Foundation
import RedisServerHarness
import XCTest

/// Presence that anyone who can write to the fleet's Redis can forge,
/// against built daemons on a real redis-server: bad lines on the channel
/// and in the members hashes are dropped and counted (`presence_rejected`)
/// and never reach a follower nor `navsync who`; a 20 MiB message is
/// dropped whole while every daemon keeps answering; other daemons'
/// members are kept up to 10 × `--max-clients`; and the presence keys
/// shrink when a room's last member leaves or its daemon dies.
final class BackplanePresenceHardeningTests: XCTestCase {
    private let channel = "navsync:presence:db0"
    private let roomsKey = "navsync:presence-rooms"
    private let mainMembers = "navsync:{main}:members"

    private func figure(_ key: String, of daemon: DaemonProcess) throws -> String? {
        let client = try daemon.connect()
        defer { client.close() }
        return try client.requestList("STATS").first { $0.hasPrefix("STAT \(key) ") }?.split(separator: " ")[2].description
    }

    private func epoch(_ fleet: Fleet) throws -> String {
        try fleet.redis.cli(["GET", "navsync:epoch"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Publishes `lines` on the presence channel as one message, as a daemon would.
    private func publish(_ fleet: Fleet, _ lines: [String]) throws {
        let receivers = try fleet.redis.cli(["PUBLISH", channel], stdin: lines.joined(separator: "\n"))
        XCTAssertEqual(receivers.trimmingCharacters(in: .whitespacesAndNewlines), String(fleet.daemons.count))
    }

    /// A fake daemon `tag` that looks alive for two minutes, so its members are not found dead.
    private func fakeDaemonAlive(_ fleet: Fleet, _ tag: String) throws {
        _ = try fleet.redis.cli(["SET", "navsync:daemon:\(tag)", "1", "PX", "120000"])
    }

    private func redisInteger(_ fleet: Fleet, _ arguments: [String]) throws -> Int? {
        Int(try fleet.redis.cli(arguments).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func test_fleet_forgedPresenceLines_droppedAndCounted_whoPrintsNoEscapes() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let follower = try fleet.daemons[0].connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        let epoch = try epoch(fleet)
        try fakeDaemonAlive(fleet, "zz")
        var bad = [
            "\(epoch) M main zz.1 evil\u{1B}]0;pwned\u{07}\u{1B}[2J control -",
            "\(epoch) M main zz.2 bo control /red:\u{1B}]0;title\u{07}",
            "\(epoch) M main zz.3 bo control /red:" + String(repeating: "x", count: 200_000),
            "\(epoch) M main zz.4 admin admin -",
        ]
        // Many more in the same message: still one warn line.
        bad += (10..<200).map { "\(epoch) M main zz.\($0) x\u{1B}[2J view -" }
        try publish(fleet, bad + ["\(epoch) M main zz.5 marker view /green"])
        XCTAssertEqual(try follower.readLine(timeout: 20), "MEMBER zz.5 marker view /green", "the only line that passed")
        for daemon in fleet.daemons {
            // The follower's line says daemon 0 has read the message; daemon 1
            // reads it from Redis on its own schedule: waited for, then exact.
            XCTAssertTrue(try waitUntil { try self.figure("presence_rejected", of: daemon) == String(bad.count) },
                          "presence_rejected \(String(describing: try? figure("presence_rejected", of: daemon)))")
            XCTAssertEqual(try figure("presence_rejected", of: daemon), String(bad.count))
            XCTAssertEqual(try figure("members_total", of: daemon), "1")
            let who = try navsync(["--connect", "127.0.0.1:\(daemon.port)", "who"])
            XCTAssertEqual(who.status, 0, who.stderr)
            XCTAssertTrue(who.stdout.contains("marker"), who.stdout)
            XCTAssertFalse(who.stdout.contains("admin"), who.stdout)
            XCTAssertFalse(who.stdout.utf8.contains { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }, "\(who.stdout.debugDescription)")
            let text = try daemon.connect().get("/metrics").text
            XCTAssertTrue(text.contains("\nnavsync_presence_rejected_total \(bad.count)\n"), text)
        }
        // The log reaches this process through a pipe, on its own thread.
        func warnings() -> [String] {
            fleet.daemons[0].log.components(separatedBy: "\n").filter { $0.contains("dropped presence read from redis") }
        }
        XCTAssertTrue(waitUntil { !warnings().isEmpty }, fleet.daemons[0].log)
        XCTAssertEqual(warnings().count, 1, "\(warnings())")
        XCTAssertFalse(warnings().joined().utf8.contains { $0 < 0x20 }, "the log line quotes nothing it read")

        // The members hashes are read as strictly: a daemon started now finds the forged entry and drops it.
        _ = try fleet.redis.cli(["HSET", mainMembers, "zz.6", "evil\u{1B}[2J view -", "zz.7", "cy view /red"])
        _ = try fleet.redis.cli(["SADD", roomsKey, "main"])
        let late = try DaemonProcess(arguments: ["--backplane", fleet.redis.url])
        defer { late.stop() }
        let who = try late.connect()
        XCTAssertEqual(try who.requestList("WHO"), ["MEMBER zz.7 cy view /red", "END"])
        XCTAssertEqual(try figure("presence_rejected", of: late), "1")
    }

    func test_fleet_twentyMiBPresenceMessage_droppedWhole_everyDaemonKeepsAnswering() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let follower = try fleet.daemons[0].connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        let ana = try fleet.daemons[1].connect()
        let id = String(try ana.request("WHOAMI").split(separator: " ")[1])
        XCTAssertEqual(try ana.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try follower.readLine(timeout: 20), "MEMBER \(id) anon control -")
        let epoch = try epoch(fleet)
        try fakeDaemonAlive(fleet, "zz")
        var lines: [String] = []
        var bytes = 0
        while bytes < 20 << 20 {
            let line = "\(epoch) M main zz.\(lines.count) n\(lines.count) view -"
            bytes += line.utf8.count + 1
            lines.append(line)
        }
        try publish(fleet, lines)
        for daemon in fleet.daemons {
            let client = try daemon.connect()
            XCTAssertEqual(try client.request("PING", timeout: 20), "PONG")
            client.close()
            XCTAssertTrue(try waitUntil(timeout: 20) { try self.figure("presence_rejected", of: daemon) == "1" })
            XCTAssertEqual(try figure("members_total", of: daemon), "1", "none of the message's members was taken")
        }
        // Presence still flows across the fleet, and nothing of the message reached the follower.
        XCTAssertEqual(try ana.request("AT /green"), "OK 0")
        XCTAssertEqual(try follower.readLine(timeout: 20), "MEMBER \(id) anon control /green")
    }

    func test_fleet_otherDaemonsMembersOverTenTimesMaxClients_dropped_readAgainOnceBelow() throws {
        let fleet = try Fleet(1, arguments: ["--max-clients", "6"])  // at most 60 members of other daemons
        defer { fleet.stop() }
        let daemon = fleet.daemons[0]
        let follower = try daemon.connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])
        let epoch = try epoch(fleet)
        try fakeDaemonAlive(fleet, "zz")
        let ids = (1...70).map { String(format: "zz.%02d", $0) }
        _ = try fleet.redis.cli(["HSET", mainMembers] + ids.flatMap { [$0, "n view -"] })
        _ = try fleet.redis.cli(["SADD", roomsKey, "main"])
        try publish(fleet, ids.map { "\(epoch) M main \($0) n view -" })
        XCTAssertEqual(try follower.readLines(60, timeout: 20), ids.prefix(60).map { "MEMBER \($0) n view -" })
        XCTAssertEqual(try figure("members_total", of: daemon), "60")
        XCTAssertEqual(try figure("presence_rejected", of: daemon), "10")
        let who = try daemon.connect()
        XCTAssertEqual(try who.requestList("WHO").count, 61)
        who.close()

        // Five leave: below the limit, the daemon reads the hashes again and fills up to it.
        let leaving = Array(ids.prefix(5))
        _ = try fleet.redis.cli(["HDEL", mainMembers] + leaving)
        try publish(fleet, leaving.map { "\(epoch) G main \($0)" })
        XCTAssertEqual(try follower.readLines(5, timeout: 20), leaving.map { "GONE \($0)" })
        var listing: [String] = []
        while listing.last != "END" { listing.append(try follower.readLine(timeout: 20)) }
        XCTAssertEqual(listing, ["PRESENCE"] + ids[5..<65].map { "MEMBER \($0) n view -" } + ["END"])
        XCTAssertEqual(try figure("members_total", of: daemon), "60")
        XCTAssertEqual(try figure("presence_rejected", of: daemon), "15", "the five still left out are counted")
    }

    func test_fleet_presenceKeysShrink_whenTheLastMemberLeaves_andWhenItsDaemonDies() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        func roomListed(_ room: String) throws -> Bool { try redisInteger(fleet, ["SISMEMBER", roomsKey, room]) == 1 }
        func hashExists(_ room: String) throws -> Bool { try redisInteger(fleet, ["EXISTS", "navsync:{\(room)}:members"]) == 1 }

        // The last member leaves: the hash and the room's entry go.
        let ana = try fleet.daemons[0].connect()
        XCTAssertEqual(try ana.request("JOIN k1"), "STATE 0 /red")
        XCTAssertEqual(try ana.request("WATCH"), "STATE 0 /red")
        XCTAssertTrue(try waitUntil(timeout: 20) { try roomListed("k1") && hashExists("k1") })
        ana.close()
        XCTAssertTrue(try waitUntil(timeout: 20) { try !roomListed("k1") && !hashExists("k1") },
                      (try? fleet.redis.cli(["SMEMBERS", roomsKey])) ?? "")

        // A daemon dies with a member: another one finds it dead and removes its keys.
        let ben = try fleet.daemons[1].connect()
        XCTAssertEqual(try ben.request("JOIN k2"), "STATE 0 /red")
        XCTAssertEqual(try ben.request("WATCH"), "STATE 0 /red")
        let listener = try fleet.daemons[0].connect()
        XCTAssertEqual(try listener.request("JOIN k2"), "STATE 0 /red")
        XCTAssertTrue(try waitUntil(timeout: 20) { try listener.requestList("WHO").count == 2 }, "daemon 0 knows ben")
        XCTAssertTrue(try waitUntil(timeout: 20) { try roomListed("k2") && hashExists("k2") })
        kill(fleet.daemons[1].pid, SIGKILL)
        XCTAssertNotNil(fleet.daemons[1].waitForExit(20))
        XCTAssertTrue(try waitUntil(timeout: 40) { try !roomListed("k2") && !hashExists("k2") },
                      (try? fleet.redis.cli(["SMEMBERS", roomsKey])) ?? "")

        // A room left in the set with nobody in it (a 1.2 fleet's leftovers) is tidied by a daemon that starts.
        _ = try fleet.redis.cli(["SADD", roomsKey, "ghost1", "ghost2"])
        let late = try DaemonProcess(arguments: ["--backplane", fleet.redis.url])
        defer { late.stop() }
        XCTAssertTrue(try waitUntil(timeout: 20) { try !roomListed("ghost1") && !roomListed("ghost2") })
        XCTAssertEqual(try fleet.redis.cli(["SMEMBERS", roomsKey]).trimmingCharacters(in: .whitespacesAndNewlines), "")
    }
}
