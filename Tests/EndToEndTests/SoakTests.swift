import Foundation
import Glibc
import XCTest

/// Soak and convergence: 100 watchers spread over five rooms and 10 actors
/// sending random commands (changes, conditional changes, JOINs, reads and
/// mistakes) across those rooms for a bounded time. Every watcher's stream
/// must be gap-free, identical to every other watcher's of the same room,
/// and end at the route `GET` reports. `NAVSYNC_LONG=1` soaks for a minute.
final class SoakTests: XCTestCase {
    func test_soak_100Watchers10Actors_streamsGapFreeIdenticalPerRoom_endAtGet() throws {
        let seconds: TimeInterval = Hardening.long ? 60 : 3
        let rooms = (0..<5).map { "soak\($0)" }
        let watcherCount = 100
        let actorCount = 10
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "warn"])
        defer { daemon.stop() }

        let swarm = Hardening.Swarm()
        swarm.startReading()
        defer { swarm.close() }
        for w in 0..<watcherCount {
            let index = try swarm.connect(port: daemon.port)
            swarm.send(index, "JOIN \(rooms[w % rooms.count])\nWATCH\n")
        }
        XCTAssertTrue(swarm.waitForAll(timeout: 30) { $1.count >= 2 }, "every watcher has its JOIN and WATCH snapshots")

        let deadline = Date().addingTimeInterval(seconds)
        let sent = Hardening.Shared([String: Int]())
        // The actors run for `seconds`, and on until the soak rooms have over
        // 100 changes between them (at most a minute more): a slow machine
        // makes fewer changes in three seconds, which is no failure of the
        // daemon's, and the stream checks below need changes to check.
        let acknowledged = Hardening.Shared([String: UInt64]())
        let enough: @Sendable () -> Bool = { acknowledged.current.filter { rooms.contains($0.key) }.values.reduce(0, +) > 100 }
        let finished = Hardening.onThreads(actorCount, timeout: seconds + 90) { actor in
            Self.act(actor, port: daemon.port, rooms: rooms, until: deadline, orUntil: enough,
                     giveUp: deadline.addingTimeInterval(60), acknowledged: acknowledged, tally: sent)
        }
        XCTAssertTrue(finished, "actors finish")

        let checker = try daemon.connect()
        var final: [String: Hardening.Observed] = [:]
        for room in rooms {
            final[room] = Hardening.Observed(try checker.request("JOIN \(room)"))
        }
        let caughtUp = swarm.waitForAll(timeout: 60) { index, lines in
            guard let last = lines.last.flatMap(Hardening.Observed.init) else { return false }
            return last.revision >= final[rooms[index % rooms.count]]?.revision ?? 0
        }
        XCTAssertTrue(caughtUp, "every watcher reaches the final revision of its room")

        var eventsDelivered = 0
        var streams: [String: [String]] = [:]
        for (index, lines) in swarm.allLines().enumerated() {
            let room = rooms[index % rooms.count]
            guard lines.count >= 2, let watched = Hardening.Observed(lines[1]), !watched.isEvent else {
                XCTFail("watcher \(index) did not start with its snapshots: \(lines.prefix(2))")
                continue
            }
            let events = Array(lines.dropFirst(2))
            var expected = watched.revision + 1
            var route = watched.route
            for line in events {
                guard let event = Hardening.Observed(line), event.isEvent else {
                    XCTFail("watcher \(index) of \(room) read a non-event: \(line)")
                    break
                }
                guard event.revision == expected else {
                    XCTFail("watcher \(index) of \(room): expected rev \(expected), got \(line)")
                    break
                }
                expected += 1
                route = event.route
            }
            XCTAssertEqual(route, final[room]?.route, "watcher \(index) ends at GET's route")
            eventsDelivered += events.count
            if let first = streams[room] {
                XCTAssertTrue(first == lines, "watcher \(index) of \(room) saw the same stream as the first watcher of the room")
            } else {
                streams[room] = lines
            }
        }
        let stats = try checker.request("STATS")
        var figures: [String: String] = [:]
        var line = stats
        while line != "END" {
            let parts = line.split(separator: " ", maxSplits: 2)
            if parts.count == 3 { figures[String(parts[1])] = String(parts[2]) }
            line = try checker.readLine()
        }
        XCTAssertEqual(figures["resyncs"], "0", "no watcher fell behind")
        let changes = rooms.map { final[$0]?.revision ?? 0 }.reduce(0, +)
        print("soak: \(seconds) s, \(watcherCount) watchers, \(actorCount) actors;",
              "commands \(sent.current.values.reduce(0, +)) (\(sent.current.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")));",
              "\(changes) changes; \(eventsDelivered) event lines delivered, all gap-free and identical per room;",
              "daemon RSS \(daemon.residentKiB) KiB (peak \(daemon.peakResidentKiB) KiB)")
        XCTAssertGreaterThan(changes, 100, "actors changed the rooms")
    }

    /// One actor: random commands, one at a time, each answered before the next.
    /// `acknowledged`: the highest revision any actor was answered `OK` in
    /// each room; the actors go on past `deadline` until `enough()` or `giveUp`.
    private static func act(_ actor: Int, port: Int, rooms: [String], until deadline: Date,
                            orUntil enough: () -> Bool, giveUp: Date,
                            acknowledged: Hardening.Shared<[String: UInt64]>, tally: Hardening.Shared<[String: Int]>) {
        var random = Hardening.Random(seed: 0x50AC + UInt64(actor))
        guard let client = try? LineClient(port: port) else { return }
        var counts: [String: Int] = [:]
        var lastRevision: UInt64 = 0
        var room = "main"
        var n = 0
        while Date() < deadline || (!enough() && Date() < giveUp) {
            n += 1
            let command = randomCommand(&random, rooms: rooms, lastRevision: lastRevision, tag: "\(actor)-\(n)")
            guard let reply = try? client.request(command, timeout: 20) else { break }
            if let rev = Hardening.okRevision(reply) {
                lastRevision = rev
                acknowledged.withLock { $0[room] = max($0[room] ?? 0, rev) }
            } else if let state = Hardening.Observed(reply) {
                lastRevision = state.revision
                if command.hasPrefix("JOIN ") { room = String(command.dropFirst("JOIN ".count)) }
            }
            let verb = String(command.prefix { $0 != " " })
            counts[reply.hasPrefix("ERR") ? "ERR" : verb, default: 0] += 1
            // A short pause keeps the load at what a single reading thread
            // can take for 100 watchers; the watchers must never lag.
            usleep(UInt32.random(in: 200...1_500, using: &random))
        }
        tally.withLock { total in
            for (key, value) in counts { total[key, default: 0] += value }
        }
    }

    private static func randomCommand(_ random: inout Hardening.Random, rooms: [String], lastRevision: UInt64,
                                      tag: String) -> String {
        let screens = ["red", "green", "blue"]
        switch Int.random(in: 0..<20, using: &random) {
        case 0, 1: return "JOIN \(rooms.randomElement(using: &random)!)"
        case 2: return "GET"
        case 3, 4: return "PUSH \(screens.randomElement(using: &random)!)"
        case 5: return "PUSH blue \(tag) with  spaces/and:colons%"
        case 6, 7: return "POP"
        case 8: return "ROOT"
        case 9, 10: return Bool.random(using: &random) ? "NEXT" : "NEXT \(tag)"
        case 11, 12: return "SELECT \(screens.randomElement(using: &random)!)"
        case 13, 14: return "OPEN /green/blue:\(Hardening.percentEncode("\(tag) é"))/red"
        case 15: return "IF \(lastRevision) PUSH green"
        case 16: return "IF \(lastRevision &+ 5) POP"
        case 17: return "PING \(tag)"
        case 18: return "PUSH nowhere"
        default: return "FROB \(tag)"
        }
    }
}
