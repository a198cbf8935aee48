import Foundation
import Glibc
import XCTest

/// One member flooding `AT` at followers that never read, against the built
/// daemon: with presence lines shared per room and turn and counted in
/// `--max-output-memory`, the daemon's RSS stays near that bound (it used to
/// hold a copy of every line per follower: 900 followers took it to 900
/// MiB), another client is answered meanwhile, and every follower, once it
/// reads, ends with the flooder's last place, by a listing if its lines were
/// dropped. TCP and WebSocket followers alike.
final class PresenceFloodMemoryTests: XCTestCase {
    static let maxOutput = 8 << 20
    static let maxPending = 256 << 10
    /// Beyond the bound: the allocator's slack, the loop's read buffers, one
    /// turn past the bound (a line per follower).
    static let slackKiB = 10 << 10
    /// Each `AT` carries this much data, so a turn of lines is big.
    static let filler = String(repeating: "x", count: 3_800)

    func test_stalledTCPFollowers_atFlood_memoryWithinTheOutputBudget_thenEachEndsWithTheLastPlace() throws {
        try floodStalledFollowers(webSocket: false, "TCP: 100 followers never reading, one member's AT flood")
    }

    func test_stalledWebSocketFollowers_atFlood_memoryWithinTheOutputBudget_thenEachGetsItsListing() throws {
        try floodStalledFollowers(webSocket: true, "WebSocket: 100 followers never reading, one member's AT flood")
    }

    /// 100 followers of room `p` that never read; the flood; then each
    /// reads: every one must end with the flooder's last place, and those
    /// whose lines were dropped must have been sent a listing.
    func floodStalledFollowers(webSocket: Bool, _ attack: String) throws {
        let daemon = try startDaemon()
        defer { daemon.stop() }
        var followers: [HostilePeer] = []
        let count = Int(ProcessInfo.processInfo.environment["PFLOOD_FOLLOWERS"] ?? "") ?? 100
        for _ in 0..<count {
            let peer = try HostilePeer(port: daemon.port)
            let request: [UInt8]
            if webSocket {
                XCTAssertTrue(peer.upgradeToWebSocket())
                request = LineClient.clientFrame(opcode: 0x1, Array("JOIN p\nPRESENCE".utf8))
            } else {
                request = Array("JOIN p\nPRESENCE\n".utf8)
            }
            XCTAssertEqual(peer.flood(request, total: request.count), request.count)
            followers.append(peer)
        }
        // The flooder stays connected (a member) until every follower has read.
        let (flooder, growthKiB, lastRoute, memberID) = try flood(daemon)
        defer { flooder.close() }
        report(attack, growthKiB: growthKiB)

        var relisted = 0
        for (index, peer) in followers.enumerated() {
            peer.widenReceiveBuffer()
            var lines = LineTally(keep: 80)
            var frames = FrameTally(keep: 80)
            var texts: [String] = []
            let caughtUp = peer.exchange(timeout: 60) { chunk in
                if webSocket {
                    frames.take(chunk)
                    texts = frames.frames.filter { $0.opcode == 0x1 }.map(\.start)
                } else {
                    lines.take(chunk)
                    texts = lines.lines.map(\.start)
                }
                return Self.lastPlace(of: memberID, in: texts)?.hasPrefix(lastRoute.prefix(40)) == true
            }
            XCTAssertTrue(caughtUp, "follower \(index) ends with the flooder's last place (its last lines: \(texts.suffix(3).map { $0.prefix(50) }))")
            if texts.contains("PRESENCE") { relisted += 1 }
        }
        print("presence flood: \(attack): \(relisted) of \(followers.count) followers were sent a listing once they read")
        XCTAssertGreaterThan(relisted, 0, "followers whose lines were dropped are sent a listing once they drain")
    }

    // MARK: - Support

    func startDaemon() throws -> Hardening.Daemon {
        try Hardening.Daemon(statePath: "none", arguments: [
            "--max-output-memory", String(Self.maxOutput), "--max-pending", String(Self.maxPending),
            "--log-level", "warn"])
    }

    /// The member, a connection of its own, floods `AT` in room `p` while the followers stall: 1,500
    /// lines of about 3.8 KB, each answer read before the next line (a loop
    /// turn each, so a line each for every follower: 5.7 MB each, past what
    /// the kernel's socket buffers take and past `--max-pending`), while
    /// the daemon's RSS is sampled. Returns the flooder, still connected, the
    /// peak's growth, the last route sent and the flooder's member id.
    func flood(_ daemon: Hardening.Daemon) throws -> (flooder: LineClient, growthKiB: Int, lastRoute: String, memberID: String) {
        let flooder = try daemon.connect()
        XCTAssertEqual(try flooder.request("JOIN p"), "STATE 0 /red")
        XCTAssertEqual(try flooder.request("WATCH"), "STATE 0 /red")
        let you = try flooder.request("WHOAMI").split(separator: " ")
        let memberID = you.count > 1 ? String(you[1]) : "?"
        var lastRoute = ""
        var otherMilliseconds = 0.0
        let before = daemon.residentKiB
        var sampler = HostileClientTests.RSSSampler(pid: daemon.pid)
        sampler.start()
        for turn in 0..<1_500 {
            lastRoute = "/red/blue:\(turn)-\(Self.filler)"
            XCTAssertEqual(try flooder.request("AT \(lastRoute)", timeout: 30), "OK 0")
            if turn % 300 == 299 {
                let started = Date()
                let other = try daemon.connect()
                XCTAssertEqual(try other.request("PING meanwhile"), "PONG meanwhile")
                other.close()
                otherMilliseconds = max(otherMilliseconds, Date().timeIntervalSince(started) * 1000)
            }
        }
        let growthKiB = sampler.stop() - before
        print("presence flood: another client answered in at most \(String(format: "%.1f", otherMilliseconds)) ms")
        return (flooder, growthKiB, lastRoute, memberID)
    }

    /// Where the member is, as a follower reading `lines` knows it: a
    /// listing (`PRESENCE` … `END`, or a first answer ending in `END`)
    /// replaces what it knew, `MEMBER` lines update it.
    static func lastPlace(of memberID: String, in lines: [String]) -> String? {
        var place: String?
        for line in lines where line.hasPrefix("MEMBER \(memberID) ") {
            place = line.split(separator: " ", maxSplits: 4).dropFirst(4).first.map(String.init)
        }
        return place
    }

    func report(_ attack: String, growthKiB: Int, file: StaticString = #filePath, line: UInt = #line) {
        let boundKiB = Self.maxOutput / 1024 + Self.slackKiB
        print("presence flood: \(attack): RSS +\(growthKiB) KiB (bound \(boundKiB) KiB)")
        if !Hardening.sanitized {
            XCTAssertLessThan(growthKiB, boundKiB, "\(attack): RSS grew past --max-output-memory + slack", file: file, line: line)
        }
    }
}
