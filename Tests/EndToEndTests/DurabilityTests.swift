import Foundation
import Glibc
import XCTest

/// Crash durability under load: actors change several rooms as fast as they
/// can while the daemon is killed with SIGKILL at random moments and
/// restarted on the same state file, again and again.
///
/// The checker holds the daemon to the protocol's promise:
///   - every `OK <rev>` any actor read is at or below the revision the
///     restarted daemon reports for that room (and so is every EVENT a
///     watcher read, since events go out only after the write);
///   - no revision of a room is ever seen with two different routes — routes
///     are known from OPEN/SELECT acknowledgements, from watchers' STATE and
///     EVENT lines and from the restarted daemon's state;
///   - each watcher connection's stream is gap-free.
///
/// Quick form in `make test`; `NAVSYNC_LONG=1` runs the long form
/// (`NAVSYNC_KILLS` overrides the number of kills).
final class DurabilityTests: XCTestCase {
    struct Ack {
        var generation: Int
        var room: String
        var revision: UInt64
    }

    struct Sighting {
        var generation: Int
        var room: String
        var revision: UInt64
        var route: String
        var source: String
    }

    /// Everything the actors, watchers and the killer learn, under one lock.
    struct Record {
        var daemonGeneration = 0
        var port = 0
        var alive = false
        var stopping = false
        var acks: [Ack] = []
        /// room → revision → (route, who saw it first).
        var routes: [String: [UInt64: (route: String, source: String)]] = [:]
        var conflicts: [String] = []
        var watcherEvents: [Ack] = []
        var gaps: [String] = []
        /// generation → room → state right after that generation's start.
        var restarted: [Int: [String: (revision: UInt64, route: String)]] = [:]
        var errors: [String: Int] = [:]

        mutating func saw(_ s: Sighting) {
            if let known = routes[s.room]?[s.revision] {
                if known.route != s.route {
                    conflicts.append("room \(s.room) rev \(s.revision): \(known.route) (\(known.source)) vs \(s.route) (\(s.source), generation \(s.generation))")
                }
            } else {
                routes[s.room, default: [:]][s.revision] = (s.route, s.source)
            }
        }
    }

    func test_kill9UnderLoad_acknowledgedRevisionsSurvive_noRevisionHasTwoRoutes() throws {
        let long = Hardening.long
        let kills = Int(ProcessInfo.processInfo.environment["NAVSYNC_KILLS"] ?? "") ?? (long ? 200 : 4)
        let actorCount = long ? 6 : 4
        let rooms = (0..<(long ? 5 : 3)).map { "dur\($0)" }
        let directory = try Hardening.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let statePath = directory + "/state.json"
        let arguments = ["--log-level", "warn"]

        var daemon = try Hardening.Daemon(statePath: statePath, arguments: arguments)
        defer { daemon.stop() }
        let record = Hardening.Shared(Record())
        record.withLock { $0.port = daemon.port; $0.alive = true }
        try checkRestart(daemon, generation: 0, rooms: rooms, record: record)

        let workers = DispatchGroup()
        for actor in 0..<actorCount {
            spawn(workers) { Self.actor(actor, rooms: rooms, record: record) }
        }
        for room in rooms {
            spawn(workers) { Self.watcher(room, record: record) }
        }

        var random = Hardening.Random(seed: 0xD0_7AB1E)
        let started = Date()
        var restartMilliseconds: [Double] = []
        var largestStateFile = 0
        var compactedGenerations = 0
        var generationInode = (try? FileManager.default.attributesOfItem(atPath: statePath))?[.systemFileNumber] as? Int
        for kill in 1...(kills + 1) {
            if kill <= kills {
                // Mostly a few hundred milliseconds of load; sometimes a kill
                // right after the restart, sometimes a longer run.
                let pause: UInt32 = switch Int.random(in: 0..<10, using: &random) {
                case 0: UInt32.random(in: 1_000...20_000, using: &random)
                // Long runs also outlast the state file's 1 MiB compaction point.
                case 1: UInt32.random(in: 500_000...(long ? 3_000_000 : 1_200_000), using: &random)
                default: UInt32.random(in: 60_000...350_000, using: &random)
                }
                usleep(pause)
            } else {
                // The last kill comes after the load stops, so the final
                // generation's acknowledgements are checked too.
                record.withLock { $0.stopping = true }
                XCTAssertEqual(workers.wait(timeout: .now() + 30), .success, "actors and watchers stop")
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: statePath)
            largestStateFile = max(largestStateFile, attributes?[.size] as? Int ?? 0)
            // Compaction renames a fresh file into place: a new inode since
            // this generation's own start-up snapshot means it compacted.
            if let inode = attributes?[.systemFileNumber] as? Int, inode != generationInode { compactedGenerations += 1 }
            let status = daemon.signal(SIGKILL)
            XCTAssertEqual(status, 128 + SIGKILL, "daemon died of SIGKILL")
            record.withLock { $0.alive = false }
            let restartBegan = Date()
            daemon = try Hardening.Daemon(statePath: statePath, arguments: arguments)
            restartMilliseconds.append(Date().timeIntervalSince(restartBegan) * 1000)
            try checkRestart(daemon, generation: kill, rooms: rooms, record: record)
            generationInode = (try? FileManager.default.attributesOfItem(atPath: statePath))?[.systemFileNumber] as? Int
            record.withLock {
                $0.daemonGeneration = kill
                $0.port = daemon.port
                $0.alive = !$0.stopping
            }
        }
        let elapsed = Date().timeIntervalSince(started)

        let final = record.current
        var checked = 0
        var failures: [String] = []
        for ack in final.acks + final.watcherEvents {
            guard let after = final.restarted[ack.generation + 1]?[ack.room] else {
                failures.append("no restart state for generation \(ack.generation + 1)")
                continue
            }
            checked += 1
            if after.revision < ack.revision {
                failures.append("room \(ack.room): rev \(ack.revision) acknowledged in generation \(ack.generation), restart has \(after.revision)")
            }
        }
        let distinct = final.routes.values.reduce(0) { $0 + $1.count }
        let maxRevisions = rooms.map { "\($0)=\(final.restarted[kills + 1]?[$0]?.revision ?? 0)" }.joined(separator: " ")
        print("durability: \(kills + 1) kills survived in \(String(format: "%.1f", elapsed)) s;",
              "\(final.acks.count) OKs and \(final.watcherEvents.count) watcher events checked against the restarted daemon;",
              "\(distinct) distinct (room, revision) routes cross-checked; final revisions \(maxRevisions);",
              "restart \(String(format: "%.0f", restartMilliseconds.max() ?? 0)) ms at most;",
              "state file at most \(largestStateFile / 1024) KiB at a kill; \(compactedGenerations) generations compacted it before their kill;",
              "errors seen: \(final.errors.sorted { $0.key < $1.key })")
        XCTAssertGreaterThan(final.acks.count, kills, "actors made progress")
        XCTAssertEqual(checked, final.acks.count + final.watcherEvents.count)
        XCTAssertEqual(failures.count, 0, "acknowledged revisions lost, e.g. \(failures.prefix(10))")
        XCTAssertEqual(final.conflicts.count, 0, "revisions seen with two routes, e.g. \(final.conflicts.prefix(10))")
        XCTAssertEqual(final.gaps.count, 0, "watcher streams with gaps, e.g. \(final.gaps.prefix(10))")
        XCTAssertNil(final.errors["internal"], "no state-file write failed")
    }

    private func spawn(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Reads every room from the daemon that has just started, before any
    /// actor can reach it: this is what the last generation left on disk.
    private func checkRestart(_ daemon: Hardening.Daemon, generation: Int, rooms: [String],
                              record: Hardening.Shared<Record>) throws {
        let client = try daemon.connect()
        var states: [String: (UInt64, String)] = [:]
        for room in rooms {
            let line = try client.request("JOIN \(room)")
            guard let state = Hardening.Observed(line), !state.isEvent else {
                XCTFail("JOIN answered \(line)")
                continue
            }
            states[room] = (state.revision, state.route)
        }
        record.withLock { r in
            r.restarted[generation] = states.mapValues { (revision: $0.0, route: $0.1) }
            for (room, state) in states {
                r.saw(Sighting(generation: generation, room: room, revision: state.0, route: state.1, source: "restart \(generation)"))
            }
        }
    }

    // MARK: - Load

    /// One actor: joins a random room, pipelines a window of random changes,
    /// records each OK as it arrives; reconnects to every new daemon.
    private static func actor(_ index: Int, rooms: [String], record: Hardening.Shared<Record>) {
        var random = Hardening.Random(seed: 0xAC70 + UInt64(index))
        var client: LineClient?
        var generation = -1
        var sequence = 0
        while true {
            let now = record.current
            if now.stopping { return }
            if client == nil || generation != now.daemonGeneration {
                client = nil
                guard now.alive, let fresh = try? LineClient(port: now.port) else {
                    usleep(2_000)
                    continue
                }
                client = fresh
                generation = now.daemonGeneration
            }
            guard let connection = client else { continue }
            let room = rooms.randomElement(using: &random)!
            var window: [(line: String, route: String?)] = []
            for _ in 0..<Int.random(in: 4...24, using: &random) {
                sequence += 1
                window.append(randomChange(&random, tag: "a\(index)n\(sequence)"))
            }
            connection.send("JOIN \(room)\n" + window.map { $0.line + "\n" }.joined())
            do {
                let joined = try connection.readLine(timeout: 3)
                if let state = Hardening.Observed(joined) {
                    record.withLock { $0.saw(Sighting(generation: generation, room: room, revision: state.revision, route: state.route, source: "JOIN by actor \(index)")) }
                }
                for change in window {
                    let reply = try connection.readLine(timeout: 3)
                    record.withLock { r in
                        if let rev = Hardening.okRevision(reply) {
                            r.acks.append(Ack(generation: generation, room: room, revision: rev))
                            if let route = change.route {
                                r.saw(Sighting(generation: generation, room: room, revision: rev, route: route, source: "OK to '\(change.line)'"))
                            }
                        } else if reply.hasPrefix("ERR ") {
                            r.errors[String(reply.split(separator: " ")[1]), default: 0] += 1
                        }
                    }
                }
            } catch {
                // The daemon died mid-window: the rest was never acknowledged.
                client = nil
            }
        }
    }

    /// A change and, for OPEN and SELECT, the route it leaves (also when it
    /// is a no-op, whose OK carries the current revision of that same route).
    private static func randomChange(_ random: inout Hardening.Random, tag: String) -> (line: String, route: String?) {
        let screens = ["red", "green", "blue"]
        switch Int.random(in: 0..<10, using: &random) {
        case 0...3:
            let depth = Int.random(in: 1...4, using: &random)
            var route = ""
            for level in 0..<depth {
                let screen = level == depth - 1 ? "blue" : screens.randomElement(using: &random)!
                route += screen == "blue" ? "/blue:\(tag)%20\(level)" : "/\(screen)"
            }
            return ("OPEN \(route)", route)
        case 4:
            let screen = screens.randomElement(using: &random)!
            return screen == "blue" ? ("SELECT blue \(tag) x", "/blue:\(tag)%20x") : ("SELECT \(screen)", "/\(screen)")
        case 5, 6:
            return Bool.random(using: &random) ? ("PUSH blue \(tag)", nil) : ("PUSH green", nil)
        case 7, 8:
            return ("POP", nil)
        default:
            return (Bool.random(using: &random) ? "NEXT" : "ROOT", nil)
        }
    }

    /// One watcher per room: WATCH on every daemon generation, record every
    /// STATE and EVENT route, and check each connection's stream has no gap.
    private static func watcher(_ room: String, record: Hardening.Shared<Record>) {
        while true {
            let now = record.current
            if now.stopping { return }
            guard now.alive, let client = try? LineClient(port: now.port) else {
                usleep(2_000)
                continue
            }
            let generation = now.daemonGeneration
            client.send("JOIN \(room)\nWATCH\n")
            var last: UInt64?
            var linesRead = 0
            while true {
                guard let line = try? client.readLine(timeout: 0.2) else {
                    if client.isClosedByPeer { break }
                    let current = record.current
                    if current.stopping || current.daemonGeneration != generation { break }
                    continue
                }
                linesRead += 1
                guard let seen = Hardening.Observed(line) else {
                    record.withLock { $0.gaps.append("watcher of \(room) read '\(line)'") }
                    continue
                }
                record.withLock { r in
                    r.saw(Sighting(generation: generation, room: room, revision: seen.revision, route: seen.route,
                                   source: "\(seen.isEvent ? "EVENT" : "STATE") to watcher of \(room)"))
                    if seen.isEvent {
                        r.watcherEvents.append(Ack(generation: generation, room: room, revision: seen.revision))
                        if let last, seen.revision != last + 1 {
                            r.gaps.append("watcher of \(room), generation \(generation): \(last) then \(seen.revision)")
                        }
                    } else if linesRead == 2, let last, seen.revision < last {
                        r.gaps.append("watcher of \(room): WATCH went back from \(last) to \(seen.revision)")
                    }
                }
                last = seen.revision
            }
        }
    }
}
