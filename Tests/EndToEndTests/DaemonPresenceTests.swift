import ChildProcessHarness
import Foundation
import XCTest

/// Presence against the built daemon: TCP, Unix and WebSocket
/// connections are all members; the stream's order, a follower's resync and
/// the end of input hold over real sockets.
final class DaemonPresenceTests: XCTestCase {
    func test_membersOverTCPUnixAndWebSocket_listedAndStreamed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let socketPath = dir.file("navsyncd.sock")
        let daemon = try DaemonProcess(arguments: ["--unix", socketPath], state: "none")
        defer { daemon.stop() }

        let follower = try daemon.connect()
        XCTAssertEqual(try follower.requestList("PRESENCE"), ["END"])

        let tcp = try daemon.connect()
        XCTAssertEqual(try tcp.request("NAME tess"), "OK 0")
        XCTAssertEqual(try tcp.request("WATCH"), "STATE 0 /red")
        let tcpID = try memberID(of: tcp)
        XCTAssertEqual(try follower.readLine(), "MEMBER \(tcpID) tess control -")

        let unix = try LineClient(unixPath: socketPath)
        let unixID = try memberID(of: unix)
        unix.send("NAME uma\nAT /green\nWATCH\n")
        XCTAssertEqual(try unix.readLines(3), ["OK 0", "OK 0", "STATE 0 /red"])
        XCTAssertEqual(try follower.readLine(), "MEMBER \(unixID) uma control /green")

        let ws = try daemon.connect()
        XCTAssertEqual(try ws.upgrade().status, 101)
        ws.sendText("NAME wes\nWATCH\nWHOAMI")
        XCTAssertEqual(try ws.readText(), "OK 0")
        XCTAssertEqual(try ws.readText(), "STATE 0 /red")
        let you = try ws.readText().split(separator: " ")
        XCTAssertEqual(Array(you.dropFirst(2)), ["wes", "control", "*"])
        let wsID = String(you[1])
        XCTAssertEqual(try follower.readLine(), "MEMBER \(wsID) wes control -")
        XCTAssertEqual(Set([tcpID, unixID, wsID]).count, 3, "ids are unique")

        XCTAssertEqual(try follower.requestList("WHO"), ["MEMBER \(tcpID) tess control -",
                                                        "MEMBER \(unixID) uma control /green",
                                                        "MEMBER \(wsID) wes control -", "END"])
        let stats = try follower.requestList("STATS")
        XCTAssertTrue(stats.contains("STAT members 3"), "\(stats)")
        XCTAssertTrue(stats.contains("STAT members_total 3"), "\(stats)")
        XCTAssertTrue(stats.contains("STAT watchers 3"), "\(stats)")

        // The WebSocket's own change: its reply, then (to followers) its line; it follows too.
        ws.sendText("PRESENCE\nAT /blue:over%20here")
        for expected in ["MEMBER \(tcpID) tess control -", "MEMBER \(unixID) uma control /green",
                         "MEMBER \(wsID) wes control -", "END", "OK 0", "MEMBER \(wsID) wes control /blue:over%20here"] {
            XCTAssertEqual(try ws.readText(), expected)
        }
        XCTAssertEqual(try follower.readLine(), "MEMBER \(wsID) wes control /blue:over%20here")

        unix.close()
        XCTAssertEqual(try follower.readLine(), "GONE \(unixID)")
        XCTAssertEqual(try ws.readText(), "GONE \(unixID)")
        XCTAssertEqual(try tcp.request("JOIN lobby"), "STATE 0 /red")
        XCTAssertEqual(try follower.readLine(), "GONE \(tcpID)")
        XCTAssertEqual(try ws.readText(), "GONE \(tcpID)")
        tcp.close()
        ws.close()
        XCTAssertEqual(try follower.readLine(), "GONE \(wsID)")
        follower.close()
    }

    func test_joiningFollower_getsStateThenTheNewRoomsListing() throws {
        let daemon = try DaemonProcess(arguments: [], state: "none")
        defer { daemon.stop() }
        let there = try daemon.connect()
        XCTAssertEqual(try there.request("JOIN lobby"), "STATE 0 /red")
        XCTAssertEqual(try there.request("NAME host"), "OK 0")
        XCTAssertEqual(try there.request("WATCH"), "STATE 0 /red")
        let thereID = try memberID(of: there)
        XCTAssertEqual(try there.requestList("PRESENCE"), ["MEMBER \(thereID) host control -", "END"])

        let mover = try daemon.connect()
        let moverID = try memberID(of: mover)
        mover.send("WATCH\nPRESENCE\n")
        XCTAssertEqual(try mover.readLines(3), ["STATE 0 /red", "MEMBER \(moverID) anon control -", "END"])
        mover.send("JOIN lobby\n")
        XCTAssertEqual(try mover.readLines(5), ["STATE 0 /red", "PRESENCE", "MEMBER \(thereID) host control -",
                                                "MEMBER \(moverID) anon control -", "END"])
        XCTAssertEqual(try there.readLine(), "MEMBER \(moverID) anon control -")
        XCTAssertTrue(mover.staysQuiet(for: 0.3), "no line about its own move")
    }

    func test_netcatPresence_printsTheListingAndEnds() throws {
        let daemon = try DaemonProcess(arguments: [], state: "none")
        defer { daemon.stop() }
        let member = try daemon.connect()
        XCTAssertEqual(try member.request("WATCH"), "STATE 0 /red")
        let id = try memberID(of: member)
        XCTAssertEqual(try netcat(port: daemon.port, "PRESENCE"), "MEMBER \(id) anon control -\nEND\n")
        XCTAssertEqual(try netcat(port: daemon.port, "NAME x", "WATCH", "WHO"),
                       "OK 0\nSTATE 0 /red\nMEMBER \(id) anon control -\nMEMBER \(Int(id)! + 2) x control -\nEND\n")
    }

    func test_slowFollower_isResyncedWithStateThenListing() throws {
        let daemon = try DaemonProcess(arguments: ["--max-pending", "4096"], state: "none")
        defer { daemon.stop() }
        let slow = try daemon.connect(receiveBufferBytes: 4096)
        let slowID = try memberID(of: slow)
        slow.send("WATCH\nPRESENCE\n")
        XCTAssertEqual(try slow.readLines(3), ["STATE 0 /red", "MEMBER \(slowID) anon control -", "END"])

        // It stops reading while another member looks at one long route after
        // another (~3 KB a line), until the daemon gives up on it.
        let actor = try daemon.connect()
        XCTAssertEqual(try actor.request("WATCH"), "STATE 0 /red")
        let actorID = try memberID(of: actor)
        let filler = String(repeating: "abcdefghij", count: 300)
        var batches = 0
        while !daemon.log.contains("is a slow watcher") && batches < 100 {
            actor.send((0..<100).map { "AT /blue:\(batches)-\($0)-\(filler)\n" }.joined())
            XCTAssertEqual(try actor.readLines(100, timeout: 20).count, 100)
            batches += 1
        }
        XCTAssertTrue(daemon.log.contains("is a slow watcher"), "its presence lines were never dropped")
        actor.send("SELECT green\nAT -\nNAME again\n")
        XCTAssertEqual(try actor.readLines(4), ["OK 1", "EVENT 1 select /green", "OK 1", "OK 1"])

        // Reading again: lines queued before each drop, then STATE and a
        // whole listing instead of what was missed, then live lines.
        var lines: [String] = []
        let last = "MEMBER \(actorID) again control -"
        // The actor's last state ends the stream: as a live line, or as the
        // last member of a listing (the resync may come after its changes).
        func caughtUp() -> Bool {
            let inListing = (lines.lastIndex(of: "PRESENCE") ?? -1) > (lines.lastIndex(of: "END") ?? -1)
            if lines.last == last { return !inListing }
            return lines.last == "END" && lines.dropLast().last == last
        }
        XCTAssertTrue(waitUntil(timeout: 60) {
            lines += (try? slow.readLines(1, timeout: 0.5)) ?? []
            return caughtUp()
        }, "\(lines.suffix(3).map { $0.prefix(60) })")
        let listings = lines.indices.filter { lines[$0] == "PRESENCE" }
        XCTAssertFalse(listings.isEmpty)
        for start in listings {
            XCTAssertTrue(lines[start - 1].hasPrefix("STATE "), "STATE comes first: \(lines[start - 1].prefix(60))")
            let listing = lines[(start + 1)...].prefix { $0 != "END" }
            XCTAssertEqual(listing.count, 2, "the listing is whole: both members")
            XCTAssertEqual(listing.first, "MEMBER \(slowID) anon control -")
            XCTAssertTrue(listing.last?.hasPrefix("MEMBER \(actorID) ") ?? false, "\(listing.last ?? "")")
        }
        let stats = try slow.requestList("STATS")
        XCTAssertTrue(stats.contains("STAT resyncs \(listings.count)"), "only the STATE counts: \(stats)")
    }

    /// The member id a connection's `WHOAMI` gives.
    private func memberID(of client: LineClient) throws -> String {
        let you = try client.request("WHOAMI").split(separator: " ")
        return String(you[1])
    }
}
