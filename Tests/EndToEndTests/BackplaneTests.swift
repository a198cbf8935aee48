import ChildProcessHarness
import Foundation
import RedisServerHarness
import XCTest

/// Several daemons on one real redis-server of the test's own (BACKPLANE.md):
/// to every client the fleet behaves like one daemon.
final class BackplaneTests: XCTestCase {
    /// Reads `STATE` then events until `revision`; returns the (rev, line) pairs after the STATE.
    private func events(_ watcher: LineClient, through revision: Int, timeout: TimeInterval = 20) throws -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let line = try watcher.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow))
            lines.append(line)
            let parts = line.split(separator: " ")
            if parts.count >= 2, let rev = Int(parts[1]), rev >= revision { return lines }
        }
    }

    private func revision(of line: String) -> Int? {
        let parts = line.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }

    func test_fleet_writersAndWatchersOnEveryDaemon_identicalGapFreeStreams_endingAtGet() throws {
        let fleet = try Fleet(3)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let watchers = try daemons.map { try $0.connect() }
        for watcher in watchers { XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red") }
        let perWriter = 100
        let writers = try daemons.map { try $0.connect() }
        // Every writer pipelines its changes at once; all three daemons write at the same time.
        for (w, writer) in writers.enumerated() {
            writer.send((0..<perWriter).map { "OPEN /red/blue:w\(w)-\($0)\n" }.joined())
        }
        var acknowledged: [Int] = []
        for writer in writers {
            for line in try writer.readLines(perWriter) {
                XCTAssertTrue(line.hasPrefix("OK "), line)
                acknowledged.append(revision(of: line) ?? -1)
            }
        }
        let total = perWriter * writers.count
        XCTAssertEqual(acknowledged.sorted(), Array(1...total), "every change got its own revision")
        var streams: [[String]] = []
        for watcher in watchers {
            let stream = try events(watcher, through: total)
            XCTAssertEqual(stream.compactMap(revision), Array(1...total), "gap-free, in order, no duplicate")
            streams.append(stream)
        }
        XCTAssertEqual(streams[0], streams[1])
        XCTAssertEqual(streams[1], streams[2])
        let last = streams[0].last!.split(separator: " ").last.map(String.init)!
        for daemon in daemons {
            XCTAssertEqual(try daemon.connect().request("GET"), "STATE \(total) \(last)")
        }
    }

    /// Pipelined changes that depend on the state before them (PUSH, POP),
    /// from three daemons into one room: every revision is its change applied
    /// to exactly the revision before it, and each connection's answers come
    /// in command order.
    func test_fleet_pipelinedPushPop_onOneRoom_eachAppliedToTheRevisionBefore() throws {
        let fleet = try Fleet(3)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let watcher = try daemons[0].connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        let pairs = 40
        let writers = try daemons.map { try $0.connect() }
        for (w, writer) in writers.enumerated() {
            writer.send((0..<pairs).map { "PUSH blue w\(w)-\($0)\nPOP\n" }.joined() + "GET\n")
        }
        var madeBy: [Int: String] = [:]
        for (w, writer) in writers.enumerated() {
            var last = 0
            for (i, line) in try writer.readLines(2 * pairs).enumerated() {
                guard let rev = revision(of: line), line.hasPrefix("OK ") else {
                    XCTFail("writer \(w) line \(i): \(line)")
                    continue
                }
                XCTAssertGreaterThan(rev, last, "writer \(w): answers in command order")
                last = rev
                madeBy[rev] = i % 2 == 0 ? "push blue:w\(w)-\(i / 2)" : "pop"
            }
            let get = try writer.readLine()
            XCTAssertTrue(get.hasPrefix("STATE "), "GET waited for the changes before it: \(get)")
            XCTAssertGreaterThanOrEqual(revision(of: get) ?? 0, last, "GET shows this connection's changes")
        }
        let total = 2 * pairs * writers.count
        XCTAssertEqual(madeBy.keys.sorted(), Array(1...total), "every change got its own revision")
        var route = "/red"
        for event in try events(watcher, through: total) {
            let parts = event.split(separator: " ").map(String.init)
            guard parts.count == 4, let rev = Int(parts[1]), let change = madeBy[rev] else {
                XCTFail("unexpected line \(event)")
                continue
            }
            if change == "pop" {
                XCTAssertEqual(parts[2], "pop", "revision \(rev)")
                guard let slash = route.lastIndex(of: "/") else {
                    XCTFail("revision \(rev) pops an empty route")
                    return
                }
                route = String(route[..<slash])
            } else {
                XCTAssertEqual(parts[2], "push", "revision \(rev)")
                route += "/" + change.dropFirst("push ".count)
            }
            XCTAssertEqual(parts[3], route, "revision \(rev) is its change applied to revision \(rev - 1)")
        }
    }

    func test_fleet_racingIf_onTwoDaemons_exactlyOneWins() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let a = try daemons[0].connect(), b = try daemons[1].connect()
        for round in 0..<20 {
            a.send("IF \(round) PUSH green\n")
            b.send("IF \(round) PUSH blue\n")
            let answers = [try a.readLine(), try b.readLine()]
            XCTAssertEqual(answers.filter { $0 == "OK \(round + 1)" }.count, 1, "round \(round): \(answers)")
            XCTAssertEqual(answers.filter { $0 == "ERR conflict current=\(round + 1)" }.count, 1, "round \(round): \(answers)")
        }
    }

    func test_fleet_watchAfterRev_continuesOnAnotherDaemon_evenOneStartedLater() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let (redis, daemons) = (fleet.redis, fleet.daemons)
        let writer = try daemons[0].connect()
        for screen in ["green", "blue", "green", "blue", "green"] { _ = try writer.request("PUSH \(screen)") }
        let late = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { late.stop() }
        for daemon in [daemons[1], late] {
            let resumer = try daemon.connect()
            XCTAssertTrue(try waitUntil { try resumer.request("GET").hasPrefix("STATE 5 ") })
            resumer.send("WATCH 2\n")
            XCTAssertEqual(try resumer.readLines(4), ["CONTINUE 2", "EVENT 3 push /red/green/blue/green",
                                                      "EVENT 4 push /red/green/blue/green/blue",
                                                      "EVENT 5 push /red/green/blue/green/blue/green"])
        }
    }

    func test_cli_addressList_triesEachInTurn_andWatchMovesToTheNextDaemon() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let list = "127.0.0.1:\(closedPort()),127.0.0.1:\(daemons[0].port),127.0.0.1:\(daemons[1].port)"
        XCTAssertEqual(try navsync(["--connect", list, "push", "green"]).stdout, "1\n", "a dead first address is skipped")
        let watch = try StreamingProcess(Binaries.client, ["--connect", list, "watch"])
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["1 state /red/green"])
        daemons[0].signal(SIGKILL)
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(daemons[1].port)", "push", "blue"]).stdout, "2\n")
        // Whether the watch resumed before or after the change, revision 2 reaches it through the other daemon.
        // The watch reconnects to the next address after a backoff: 30 s, not 10.
        XCTAssertTrue(waitUntil(timeout: 30) {
            watch.lines.contains("2 push /red/green/blue") || watch.lines.contains("2 state /red/green/blue")
        }, watch.stdout + watch.stderr)
        let bad = try navsync(["--connect", "127.0.0.1:1,,127.0.0.1:2", "get"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
    }

    func test_fleet_daemonKilled_othersCarryOn_andItsClientsMoveOver() throws {
        let fleet = try Fleet(3)
        defer { fleet.stop() }
        let daemons = fleet.daemons
        let watcher = try fleet.watcher(on: 2)
        let doomed = try daemons[0].connect(), survivor = try daemons[1].connect()
        doomed.send((0..<50).map { "OPEN /red/blue:a\($0)\n" }.joined())
        survivor.send((0..<50).map { "OPEN /red/green/blue:b\($0)\n" }.joined())
        kill(daemons[0].pid, SIGKILL)
        _ = try survivor.readLines(50)
        // A client of the dead daemon goes to another address and finds every acknowledged change.
        let moved = try daemons[1].connect()
        let state = try moved.request("GET")
        let rev = revision(of: state) ?? 0
        // A GET that is no STATE ends the test here: the range below needs a revision.
        guard rev >= 50 else { return XCTFail("GET on another daemon after the kill: \(state)") }
        let stream = try events(watcher, through: rev)
        XCTAssertEqual(stream.compactMap(revision), Array(1...rev))
        XCTAssertEqual(stream.last?.split(separator: " ").last, state.split(separator: " ").last)
    }

    func test_fleet_redisKilledAndRestarted_noAcknowledgedRevisionLost_unavailableMeanwhile_watchersCatchUp() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let (redis, daemons) = (fleet.redis, fleet.daemons)
        let watcher = try fleet.watcher(on: 1)
        let writer = try daemons[0].connect()
        var acknowledged: [Int: String] = [:]
        var refusals: [String] = []
        var restarted = false
        var restartedAt = Date()
        var n = 0
        var watched: [String] = []
        var caughtUp: TimeInterval?
        // Bounded: a fleet that never takes changes again fails the test instead of spinning.
        let giveUp = Date().addingTimeInterval(60)
        while acknowledged.count < 120 {
            guard Date() < giveUp else {
                return XCTFail("\(acknowledged.count) of 120 changes acknowledged in 60 s; last refusal: \(refusals.last ?? "none")")
            }
            n += 1
            let route = "/red/blue:n\(n)"
            let answer = try writer.request("OPEN \(route)")
            if answer.hasPrefix("OK "), let target = revision(of: answer) {
                acknowledged[target] = route
                if restarted && caughtUp == nil {
                    // The first change after the restart: how long until the watcher holds it?
                    while let line = try? watcher.readLine(timeout: 20), let rev = revision(of: line) {
                        watched.append(line)
                        if rev >= target { break }
                    }
                    caughtUp = Date().timeIntervalSince(restartedAt)
                }
            } else {
                XCTAssertTrue(answer.hasPrefix("ERR unavailable "), answer)
                refusals.append(answer)
                Thread.sleep(forTimeInterval: 0.02)
            }
            if acknowledged.count == 60 && !restarted {
                redis.kill9()
                XCTAssertTrue(try writer.request("GET").hasPrefix("ERR unavailable "))
                XCTAssertEqual(try writer.request("PING"), "PONG", "PING still answers")
                try redis.restart()
                restarted = true
                restartedAt = Date()
            }
        }
        XCTAssertFalse(refusals.isEmpty, "the outage was seen as ERR unavailable")
        let last = acknowledged.keys.max()!
        let stream = watched + (try events(watcher, through: last))
        print("backplane: the watcher held the first change after the redis restart "
              + "\(String(format: "%.3f", caughtUp ?? -1)) s after redis was ready again; \(refusals.count) refusals")
        let byRevision = Dictionary(stream.compactMap { line in revision(of: line).map { ($0, line) } }, uniquingKeysWith: { $1 })
        XCTAssertEqual(stream.compactMap(revision), Array(1...last), "gap-free across the outage")
        for (rev, route) in acknowledged {
            XCTAssertEqual(byRevision[rev], "EVENT \(rev) open \(route)", "acknowledged revision \(rev) survived")
        }
        XCTAssertTrue(daemons[0].log.contains("backplane down"), daemons[0].log)
        XCTAssertEqual(daemons[0].log.components(separatedBy: "backplane down").count - 1, 1, "one line per outage")
    }

    func test_fleet_redisEmptiedWhileWatching_watchersResync_noOldEventReplayed() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let (redis, daemons) = (fleet.redis, fleet.daemons)
        let watcher = try fleet.watcher(on: 1)
        let writer = try daemons[0].connect()
        for _ in 0..<3 { _ = try writer.request("PUSH green") }
        XCTAssertEqual(try watcher.readLines(3).compactMap(revision), [1, 2, 3])
        _ = try redis.cli(["FLUSHALL"])
        XCTAssertEqual(try watcher.readLine(timeout: 30), "STATE 0 /red", "a resync to the emptied store")
        XCTAssertTrue(try waitUntil(timeout: 30) { try writer.request("PUSH blue").hasPrefix("OK 1") })
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 push /red/blue")
    }

    func test_fleet_redisDownAtStart_exitsOne_withOneLine() throws {
        let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--backplane", "redis://127.0.0.1:\(closedPort())"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("navsyncd: backplane: cannot use redis at redis://127.0.0.1:"), result.stderr)
        XCTAssertFalse(result.stderr.contains("listening on"), result.stderr)
    }

    func test_backplane_usageErrors_exit64() throws {
        for arguments in [["--backplane", "redis://127.0.0.1:6379", "--state", "none"],
                          ["--backplane", "127.0.0.1:6379"],
                          ["--backplane", "redis://127.0.0.1:6379", "--backplane-prefix", "a{b}"],
                          ["--replace-catalog"]] {
            let result = try runProcess(Binaries.daemon, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
        }
    }

    func test_fleet_catalogMismatch_refusesToStart_unlessReplaceCatalog_thenTheFleetAdoptsIt() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { first.stop() }
        let flow = try directory.write("flow.json", """
            {"initial": "viewA", "screens": [
              {"name": "viewA", "title": "View A", "color": "cyan", "next": "viewB"},
              {"name": "viewB", "title": "View B", "color": "magenta", "next": "viewA"}]}
            """)
        let refused = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--backplane", redis.url, "--screens", flow])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("initial: \"viewA\" here, \"red\" there"), refused.stderr)
        let moved = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--backplane", redis.url, "--screens", flow,
                                                     "--replace-catalog"])
        XCTAssertEqual(moved.status, 1, "--replace-catalog follows the reload rules: initial may not change")
        XCTAssertTrue(moved.stderr.contains("initial"), moved.stderr)
        let retitled = try directory.write("retitled.json", """
            {"initial": "red", "screens": [
              {"name": "red", "title": "Rot", "color": "red", "next": "green"},
              {"name": "green", "title": "Grün", "color": "green", "next": "red"}]}
            """)
        let watcher = try first.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        let replacing = try DaemonProcess(arguments: ["--backplane", redis.url, "--screens", retitled, "--replace-catalog"])
        defer { replacing.stop() }
        XCTAssertEqual(try watcher.readLine(), "CATALOG", "the first daemon adopted the fleet's new catalog")
        XCTAssertEqual(try first.connect().requestList("SCREENS").first, "SCREEN red red green none Rot")
    }

    /// The room's history stream in Redis is bounded like the daemon's own
    /// history: by `--history` entries and by `--history-bytes`.
    func test_fleet_historyStream_boundedByCount_andByHistoryBytes() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let byCount = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-prefix", "count:", "--history", "5"])
        defer { byCount.stop() }
        let byBytes = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-prefix", "bytes:",
                                                    "--history", "1000", "--history-bytes", "2000"])
        defer { byBytes.stop() }
        let small = try byCount.connect(), large = try byBytes.connect()
        let data = String(repeating: "x", count: 300)
        for i in 1...30 {
            XCTAssertEqual(try small.request("OPEN /red/blue:\(i)"), "OK \(i)")
            XCTAssertEqual(try large.request("OPEN /red/blue:\(i)\(data)"), "OK \(i)")
        }
        XCTAssertEqual(try redis.cli(["XLEN", "count:{main}:history"]), "5\n", "--history entries (1/16 of slack is none here)")
        let held = Int(try redis.cli(["XLEN", "bytes:{main}:history"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertTrue((1...7).contains(held), "about 2000 bytes of ~320-byte entries, not --history's 1000: \(held)")
        let bytes = Int(try redis.cli(["HGET", "bytes:{main}:state", "hbytes"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        XCTAssertTrue((1...2125).contains(bytes), "the byte count kept beside the state, within 1/16 of the bound: \(bytes)")
        XCTAssertTrue(try redis.cli(["XRANGE", "bytes:{main}:history", "-", "+"]).contains("blue:30"), "the newest stays")
        // The trimmed history still serves a resume within it, on a daemon that starts later.
        let late = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-prefix", "bytes:",
                                                 "--history", "1000", "--history-bytes", "2000"])
        defer { late.stop() }
        let resumer = try late.connect()
        XCTAssertEqual(try resumer.request("WATCH 29"), "CONTINUE 29")
        XCTAssertEqual(try resumer.readLine(), "EVENT 30 open /red/blue:30\(data)")
    }

    /// `--max-rooms` counts the fleet's rooms (in the fleet's room set, asked
    /// before a room's first change; the change function touches the room's
    /// own keys only).
    func test_fleet_maxRooms_countsTheRoomsOfEveryDaemon() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let a = try DaemonProcess(arguments: ["--backplane", redis.url, "--max-rooms", "2"])
        defer { a.stop() }
        let b = try DaemonProcess(arguments: ["--backplane", redis.url, "--max-rooms", "2"])
        defer { b.stop() }
        let onA = try a.connect(), onB = try b.connect()
        XCTAssertEqual(try onA.request("JOIN one"), "STATE 0 /red")
        XCTAssertEqual(try onA.request("PUSH green"), "OK 1")
        XCTAssertEqual(try onB.request("JOIN two"), "STATE 0 /red")
        XCTAssertEqual(try onB.request("PUSH green"), "OK 1")
        XCTAssertEqual(try onA.request("JOIN three"), "STATE 0 /red")
        XCTAssertTrue(try onA.request("PUSH green").hasPrefix("ERR limit "), "a third room, made on the other daemon")
        XCTAssertEqual(try onA.request("GET"), "STATE 0 /red", "the refused room holds nothing")
        XCTAssertEqual(try onB.request("JOIN one"), "STATE 1 /red/green")
        XCTAssertEqual(try onB.request("PUSH blue"), "OK 2", "rooms already counted still change")
        XCTAssertEqual(try redis.cli(["SCARD", "navsync:rooms"]), "2\n")
        let keys = try redis.cli(["KEYS", "navsync:*"]).split(separator: "\n").map(String.init).sorted()
        XCTAssertEqual(keys, ["navsync:catalog", "navsync:epoch", "navsync:rooms", "navsync:{one}:history",
                              "navsync:{one}:state", "navsync:{two}:history", "navsync:{two}:state"],
                       "a room's keys under its hash tag; three fleet-wide keys")
    }

    func test_fleet_roomWithBrokenKeys_daemonStarts_otherRoomsWork_andItsChangesAreRefused() throws {
        // A room's state key of the wrong type (written by hand, or by
        // something else sharing the prefix): reading every room at start
        // must not wait for ever on it.
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        _ = try redis.cli(["SADD", "navsync:rooms", "broken"])
        _ = try redis.cli(["SET", "navsync:{broken}:state", "not a hash"])
        let daemon = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { daemon.stop() }
        XCTAssertTrue(try waitUntil { daemon.log.contains("room broken cannot be read from redis") }, daemon.log)
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("PUSH blue"), "OK 1", "the other rooms work")
        // Its commands are refused (a refused JOIN leaves the connection where it was).
        let refused = try client.request("JOIN broken")
        XCTAssertTrue(refused.hasPrefix("ERR unavailable"), refused)
        XCTAssertTrue(refused.contains("WRONGTYPE"), "says why: \(refused)")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /red/blue")
        XCTAssertEqual(try client.request("PING"), "PONG", "the connection stays usable")
    }

    func test_fleet_prefixesIsolateFleets_onOneRedis() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let blue = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-prefix", "blue:"])
        defer { blue.stop() }
        let green = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-prefix", "green:"])
        defer { green.stop() }
        XCTAssertEqual(try blue.connect().request("PUSH blue"), "OK 1")
        XCTAssertEqual(try green.connect().request("GET"), "STATE 0 /red")
        XCTAssertEqual(try green.connect().request("PUSH green"), "OK 1")
        XCTAssertEqual(try blue.connect().request("GET"), "STATE 1 /red/blue")
        XCTAssertEqual(try redis.cli(["HGET", "blue:{main}:state", "route"]), "/red/blue\n")
    }

    /// Reads the daemon's `STAT` lines into a dictionary.
    /// BACKPLANE.md: `STATS` and `/metrics` both show the backplane's
    /// state, from one table of figures, before and during an outage.
    func test_backplane_metricsShowTheBackplaneFigures_likeStats_upThenDown() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let daemon = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.connect().request("SELECT green"), "OK 1")
        let up = ["navsync_backplane_up": "1", "navsync_backplane_outages_total": "0",
                  "navsync_backplane_gaps_filled_total": "0", "navsync_backplane_rooms_unreadable": "0"]
        let metrics = try daemon.connect().get("/metrics").text
        for (name, value) in up {
            XCTAssertTrue(metrics.contains("# HELP \(name) ") && metrics.contains("# TYPE \(name) "), name)
            XCTAssertTrue(metrics.contains("\n\(name) \(value)\n"), "\(name) \(value) in\n\(metrics)")
        }
        var figures = try stats(daemon)
        XCTAssertEqual(figures["backplane_up"], "1")
        XCTAssertEqual(figures["backplane"], "up", "the word stays for who reads it")
        XCTAssertEqual(figures["backplane_gaps_filled"], "0")
        XCTAssertEqual(figures["persistence"], "redis")

        redis.kill9()
        XCTAssertTrue(try waitUntil(timeout: 20) { try self.stats(daemon)["backplane_up"] == "0" }, daemon.log)
        figures = try stats(daemon)
        XCTAssertEqual(figures["backplane"], "down")
        XCTAssertEqual(figures["backplane_outages"], "1")
        let down = try daemon.connect().get("/metrics").text
        XCTAssertTrue(down.contains("\nnavsync_backplane_up 0\n"), down)
        XCTAssertTrue(down.contains("\nnavsync_backplane_outages_total 1\n"), down)
    }

    private func stats(_ daemon: DaemonProcess) throws -> [String: String] {
        var figures: [String: String] = [:]
        for line in try daemon.connect().requestList("STATS") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            if parts.count == 3, parts[0] == "STAT" { figures[parts[1]] = parts[2] }
        }
        return figures
    }

    /// A route in Redis that does not decode, reached three ways (a change
    /// that meets it, a daemon that starts on it, an event published with
    /// it), stays that room's problem: the room answers `ERR unavailable`
    /// naming it, every other room of the fleet keeps working, and once the
    /// key is repaired the room works again.
    func test_fleet_roomWithUndecodableRoute_onlyThatRoomRefused_othersWork_repairRecovers() throws {
        let fleet = try Fleet(2)
        defer { fleet.stop() }
        let redis = fleet.redis
        let (first, second) = (fleet.daemons[0], fleet.daemons[1])
        let watcher = try second.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        let client = try first.connect()
        XCTAssertEqual(try client.request("PUSH blue"), "OK 1")
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 push /red/blue")
        XCTAssertEqual(try client.request("JOIN bad"), "STATE 0 /red")
        XCTAssertEqual(try client.request("PUSH green"), "OK 1")

        // 1. Written behind the fleet's back, one revision ahead: the next change meets it.
        _ = try redis.cli(["HSET", "navsync:{bad}:state", "rev", "2", "route", "no-slash%ZZ"])
        let refused = try client.request("PUSH blue")
        XCTAssertTrue(refused.hasPrefix("ERR unavailable room bad cannot be read"), refused)
        XCTAssertTrue(refused.contains("does not decode"), refused)
        XCTAssertTrue(waitUntil { first.log.contains("room bad cannot be read from redis (key navsync:{bad}:state") },
                      first.log)
        XCTAssertEqual(try stats(first)["backplane_rooms_unreadable"], "1")
        let unreadableGet = try client.request("GET")
        XCTAssertTrue(unreadableGet.hasPrefix("ERR unavailable room bad cannot be read"), "reads are refused too: \(unreadableGet)")
        XCTAssertEqual(try client.request("JOIN main"), "STATE 1 /red/blue")
        XCTAssertEqual(try client.request("PUSH green"), "OK 2", "the other rooms work")
        XCTAssertEqual(try watcher.readLine(), "EVENT 2 push /red/blue/green")

        // 2. A daemon that starts on it starts, and only that room is refused.
        let third = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { third.stop() }
        let late = try third.connect()
        XCTAssertEqual(try late.request("GET"), "STATE 2 /red/blue/green")
        XCTAssertEqual(try late.request("POP"), "OK 3")
        XCTAssertEqual(try watcher.readLine(), "EVENT 3 pop /red/blue")
        let refusedJoin = try late.request("JOIN bad")
        XCTAssertTrue(refusedJoin.hasPrefix("ERR unavailable room bad cannot be read"), refusedJoin)
        XCTAssertEqual(try late.request("GET"), "STATE 3 /red/blue", "a refused JOIN leaves the connection where it was")
        XCTAssertEqual(try stats(third)["backplane_rooms_unreadable"], "1")

        // 3. Published on the fleet's channel with a route that does not decode.
        let epoch = try redis.cli(["GET", "navsync:epoch"]).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try redis.cli(["PUBLISH", "navsync:changes:db0", "\(epoch) main 4 forged push /red/%%"])
        XCTAssertTrue(waitUntil { second.log.contains("room main cannot be read from redis") }, second.log)
        XCTAssertEqual(try client.request("JOIN other"), "STATE 0 /red")
        XCTAssertEqual(try client.request("PUSH blue"), "OK 1", "a third room is untouched by the other two")
        // Main's own keys are fine: the next change reads them again and goes through.
        XCTAssertEqual(try watcher.request("PUSH green"), "OK 4")
        XCTAssertEqual(try stats(second)["backplane_rooms_unreadable"], "0")

        // Repaired by hand: the room reads again and takes changes.
        _ = try redis.cli(["HSET", "navsync:{bad}:state", "rev", "2", "route", "/red/green/blue", "tag", "repair"])
        // Each refusal has the daemon read the room again: JOIN works once that read is back.
        XCTAssertTrue(try waitUntil { try late.request("JOIN bad").hasPrefix("STATE 2 /red/green/blue") }, third.log)
        XCTAssertEqual(try late.request("PUSH green"), "OK 3")
        XCTAssertEqual(try late.request("GET"), "STATE 3 /red/green/blue/green")
        // The other daemons read it again when its event reaches them.
        for daemon in [first, second] {
            XCTAssertTrue(try waitUntil { try self.stats(daemon)["backplane_rooms_unreadable"] == "0" }, daemon.log)
        }
        XCTAssertEqual(try client.request("JOIN bad"), "STATE 3 /red/green/blue/green")
        XCTAssertEqual(try client.request("POP"), "OK 4")
        for daemon in [first, second, third] {
            XCTAssertEqual(try daemon.connect().request("PING"), "PONG")
            XCTAssertFalse(daemon.log.contains("backplane down"), daemon.log)
        }
    }

    /// A revision in Redis at the largest 64-bit value, or one that is not a
    /// revision at all, makes its room unreadable, not the daemon; a room one
    /// below it reads and refuses its next change with `limit`.
    func test_fleet_roomAtLargestRevision_thatRoomRefused_daemonStaysUp() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let stored = ["top": "18446744073709551615", "huge": "99999999999999999999999", "signed": "+7",
                      "edge": "18446744073709551614"]
        for (room, rev) in stored {
            _ = try redis.cli(["SADD", "navsync:rooms", room])
            _ = try redis.cli(["HSET", "navsync:{\(room)}:state", "rev", rev, "route", "/red", "tag", "t"])
        }
        let daemon = try DaemonProcess(arguments: ["--backplane", redis.url])
        defer { daemon.stop() }
        let client = try daemon.connect()
        for room in ["top", "huge", "signed"] {
            let refused = try client.request("JOIN \(room)")
            XCTAssertTrue(refused.hasPrefix("ERR unavailable room \(room) cannot be read"), refused)
            XCTAssertTrue(refused.contains(stored[room]!), "names the revision: \(refused)")
            XCTAssertEqual(try client.request("GET"), "STATE 0 /red", "still in main")
        }
        XCTAssertEqual(try client.request("JOIN edge"), "STATE 18446744073709551614 /red")
        let limit = try client.request("SELECT green")
        XCTAssertTrue(limit.hasPrefix("ERR limit ") && limit.contains("maximum"), limit)
        XCTAssertEqual(try redis.cli(["HGET", "navsync:{edge}:state", "rev"]), "18446744073709551614\n")
        XCTAssertEqual(try client.request("JOIN main"), "STATE 0 /red")
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        XCTAssertEqual(try stats(daemon)["backplane_rooms_unreadable"], "3")
        XCTAssertFalse(daemon.log.contains("backplane down"), daemon.log)
    }

    /// Fleets on one Redis that differ only in database number, or only in
    /// prefix, share nothing: writers and watchers on each at once, no
    /// `unavailable`, and every watcher sees exactly its own fleet's changes.
    func test_fleet_databasesAndPrefixesIsolateFleets_writersAndWatchersOnEach() throws {
        let redis = try RedisServerProcess()
        defer { redis.remove() }
        let layouts: [(name: String, arguments: [String])] = [
            ("A", ["--backplane", redis.url]),
            ("B", ["--backplane", redis.url + "/3"]),
            ("C", ["--backplane", redis.url, "--backplane-prefix", "other:"]),
        ]
        var daemons: [[DaemonProcess]] = []
        defer { daemons.joined().forEach { $0.stop() } }
        for layout in layouts {
            daemons.append([try DaemonProcess(arguments: layout.arguments), try DaemonProcess(arguments: layout.arguments)])
        }
        let watchers = try daemons.map { try $0[0].connect() }
        for watcher in watchers { XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red") }
        let writers = try daemons.map { try $0[1].connect() }
        let replies = Locked([[String]](repeating: [], count: layouts.count))
        let names = layouts.map(\.name)
        // Each writer pipelines windows of 16 changes for about two seconds (at most 4,000).
        runOnThreads(layouts.count, timeout: 60) { f in
            let until = Date().addingTimeInterval(2)
            var sent = 0
            while Date() < until && sent < 4_000 {
                writers[f].send((sent..<(sent + 16)).map { "OPEN /red/blue:\(names[f])-\($0)\n" }.joined())
                sent += 16
                guard let lines = try? writers[f].readLines(16) else { return }
                replies.withLock { $0[f] += lines }
            }
        }
        for (f, name) in names.enumerated() {
            let answers = replies.withLock { $0[f] }
            XCTAssertGreaterThan(answers.count, 0, name)
            XCTAssertEqual(answers, (1...answers.count).map { "OK \($0)" }, "fleet \(name): every change applied, in order")
            let stream = try events(watchers[f], through: answers.count)
            XCTAssertEqual(stream.compactMap(revision), Array(1...answers.count), "fleet \(name): gap-free")
            XCTAssertEqual(stream, (0..<answers.count).map { "EVENT \($0 + 1) open /red/blue:\(name)-\($0)" },
                           "fleet \(name) sees its own changes and nothing else")
            XCTAssertTrue(watchers[f].staysQuiet(for: 0.2), "fleet \(name): no event from another fleet")
            for daemon in daemons[f] {
                XCTAssertEqual(try daemon.connect().request("GET"), "STATE \(answers.count) /red/blue:\(name)-\(answers.count - 1)")
                XCTAssertFalse(daemon.log.contains("another epoch"), daemon.log)
                XCTAssertFalse(daemon.log.contains("backplane down"), daemon.log)
            }
        }
    }
}
