import ChildProcessHarness
import Foundation
import Glibc
import XCTest

/// Connection liveness: a client that is gone stops counting at once,
/// TCP keepalive is on for every connection, and watchers hear of a
/// catalog reload.
final class DaemonLivenessTests: XCTestCase {
    private func watchers(_ client: LineClient) throws -> String? {
        try client.requestList("STATS").first { $0.hasPrefix("STAT watchers_total ") }
    }

    func test_killedNetcatWatcher_stopsCountingAtOnce() throws {
        let daemon = try DaemonProcess(state: "none")
        let probe = try daemon.connect()
        let nc = Process()
        nc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        nc.arguments = ["nc", "127.0.0.1", String(daemon.port)]
        let input = Pipe(), output = Pipe()
        nc.standardInput = input
        nc.standardOutput = output
        nc.standardError = FileHandle.nullDevice
        try nc.run()
        LiveChildren.track(nc)
        // Once a wait has seen nc end, its PID is no longer ours to signal.
        var ending: ChildExit.Ending?
        defer { if ending == nil { ChildExit.kill(nc) } }
        input.fileHandleForWriting.write(Data("WATCH\n".utf8))
        XCTAssertTrue(waitUntil { (try? self.watchers(probe)) == "STAT watchers_total 1" }, "nc never watched")

        kill(nc.processIdentifier, SIGKILL)
        ending = ChildExit.waitOrKill(nc, seconds: 5, what: "nc after SIGKILL")
        // No change is made in the room: the count must drop by itself.
        XCTAssertTrue(waitUntil(timeout: 20) { (try? self.watchers(probe)) == "STAT watchers_total 0" },
                      "a killed nc still counts as a watcher: \(String(describing: try? watchers(probe)))")
    }

    func test_halfClosedWatchers_andAQuittingOne_leaveNoWatcherBehind() throws {
        let daemon = try DaemonProcess(state: "none")
        let probe = try daemon.connect()
        for _ in 0..<3 {
            let watcher = try daemon.connect()
            XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
            watcher.shutdownWrite()
            XCTAssertEqual(try watcher.readUntilClosed(), [])
        }
        let quitter = try daemon.connect()
        XCTAssertEqual(try quitter.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try quitter.request("QUIT"), "BYE")
        XCTAssertEqual(try watchers(probe), "STAT watchers_total 0")
    }

    func test_interruptedCLIWatches_stopCountingAtOnce() throws {
        let daemon = try DaemonProcess(state: "none")
        let probe = try daemon.connect()
        let watches = try (0..<2).map { _ in
            try StreamingProcess(Binaries.client, ["--connect", "127.0.0.1:\(daemon.port)", "watch"])
        }
        defer { for watch in watches { watch.stop() } }
        for watch in watches { XCTAssertEqual(watch.waitForLines(1), ["0 state /red"]) }
        XCTAssertEqual(try watchers(probe), "STAT watchers_total 2")
        watches[0].signal(SIGINT)
        watches[1].signal(SIGTERM)
        for watch in watches { XCTAssertEqual(watch.waitForExit(), 0) }
        // Nothing changes in the room: the count must drop without a broadcast.
        XCTAssertTrue(waitUntil(timeout: 20) { (try? self.watchers(probe)) == "STAT watchers_total 0" },
                      "interrupted watches still count: \(String(describing: try? watchers(probe)))")
    }

    func test_daemonStall_reconnectingWatches_leaveNoStaleWatcherBehind() throws {
        let daemon = try DaemonProcess(state: "none")
        let watches = try (0..<3).map { _ in
            try StreamingProcess(Binaries.client, ["--connect", "127.0.0.1:\(daemon.port)", "watch"])
        }
        defer { for watch in watches { watch.stop() } }
        for watch in watches { XCTAssertEqual(watch.waitForLines(1), ["0 state /red"]) }

        // Stalled, the daemon answers no heartbeat: every watch gives its
        // connection up and queues a new one in the listen backlog.
        kill(daemon.pid, SIGSTOP)
        let noticed = waitUntil(timeout: 20) { watches.allSatisfy { $0.stderr.contains("connection lost") } }
        kill(daemon.pid, SIGCONT)
        XCTAssertTrue(noticed, "the watches never noticed the stall: \(watches.map(\.stderr))")
        let probe = try daemon.connect()
        // Back, it reads the old connections' ends and drops them with no change
        // in the room; the reconnected watches are the only watchers left.
        XCTAssertTrue(waitUntil(timeout: 30) {
            (try? self.watchers(probe)) == "STAT watchers_total 3"
                && watches.allSatisfy { $0.stderr.components(separatedBy: "watching room main").count == 3 }
        }, "after the stall: \(String(describing: try? watchers(probe)))")
        for watch in watches { XCTAssertEqual(watch.lines, ["0 state /red"], "continued, nothing printed twice") }
    }

    /// The daemon's side of the connection from `client`, as `ss -tio` shows it.
    private func socketInfo(daemonPort: Int, client: LineClient) throws -> String {
        let result = try runProcess("/usr/bin/env", ["ss", "-tion", "state", "established",
                                                     "( sport = :\(daemonPort) )"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func test_keepalive_isOnForTCPConnections_andOffWithZero() throws {
        let daemon = try DaemonProcess(arguments: ["--keepalive", "45"], state: "none")
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("PING"), "PONG")
        let info = try socketInfo(daemonPort: daemon.port, client: client)
        XCTAssertTrue(info.contains("timer:(keepalive"), "no keepalive timer on the daemon's socket:\n\(info)")

        let off = try DaemonProcess(arguments: ["--keepalive", "0"], state: "none")
        let other = try off.connect()
        XCTAssertEqual(try other.request("PING"), "PONG")
        let offInfo = try socketInfo(daemonPort: off.port, client: other)
        XCTAssertTrue(offInfo.contains("127.0.0.1:\(off.port)"), offInfo)
        XCTAssertFalse(offInfo.contains("keepalive"), "--keepalive 0 still probes:\n\(offInfo)")
    }

    func test_sighup_changedCatalog_sendsCATALOGToWatchers_initialChangeIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("screens.json", DaemonCatalogTests.abcCatalog)
        let daemon = try DaemonProcess(arguments: ["--screens", path], state: "none")
        let actor = try daemon.connect(), watcher = try daemon.connect(), idle = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /viewA")
        XCTAssertEqual(try actor.request("OPEN /viewA/viewC"), "OK 1")
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 open /viewA/viewC")

        // The same file again: nothing to announce.
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.contains("unchanged") }, daemon.log)
        XCTAssertTrue(watcher.staysQuiet(for: 0.2))

        // viewC is dropped.
        try dir.write("screens.json", """
            {"initial": "viewA", "screens": [
              {"name": "viewA", "title": "View A", "color": "cyan", "message": "Start", "next": "viewB"},
              {"name": "viewB", "title": "View B", "color": "green", "data": "required"}
            ]}
            """)
        kill(daemon.pid, SIGHUP)
        XCTAssertEqual(try watcher.readLine(), "CATALOG")
        XCTAssertEqual(try watcher.requestList("SCREENS"),
                       ["SCREEN viewA cyan viewB none View A", "SCREEN viewB green - required View B", "END"])
        XCTAssertEqual(try watcher.requestList("MESSAGES"), ["MESSAGE viewA Start", "END"])
        XCTAssertTrue(idle.staysQuiet(for: 0.2), "only watchers are told")
        XCTAssertTrue(try actor.request("NEXT").hasPrefix("ERR no-next "), "NEXT from a dropped screen")

        // A catalog that starts elsewhere is refused; the old one stays.
        try dir.write("screens.json", """
            {"initial": "viewB2", "screens": [{"name": "viewB2", "title": "B2", "color": "red"}]}
            """)
        let logBefore = daemon.log.count
        kill(daemon.pid, SIGHUP)
        XCTAssertTrue(waitUntil { daemon.log.dropFirst(logBefore).contains("kept the old catalog") }, daemon.log)
        XCTAssertTrue(watcher.staysQuiet(for: 0.2))
        XCTAssertEqual(try actor.requestList("SCREENS").count, 3)
    }
}
