import Foundation
import XCTest

/// `navsync watch`: a line per change as it happens, a fresh `state` line
/// after every reconnect, exit 0 on SIGINT and SIGTERM.
final class CLIWatchTests: XCTestCase {
    func test_watch_streamsEachChangeAsItHappens_andExitsZeroOnSIGINT() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let watch = try StreamingProcess(Binaries.client, ["--connect", "127.0.0.1:\(daemon.port)", "watch"])
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["0 state /red"])

        let other = try daemon.connect()
        XCTAssertEqual(try other.request("SELECT green"), "OK 1")
        // Each line must arrive while the watcher keeps running: nothing waits for a buffer to fill.
        XCTAssertEqual(watch.waitForLines(2).last, "1 select /green")
        XCTAssertEqual(try other.request("PUSH blue hello world"), "OK 2")
        XCTAssertEqual(watch.waitForLines(3).last, "2 push /green/blue:hello%20world")
        XCTAssertEqual(try other.request("OPEN /red/blue"), "OK 3")
        XCTAssertEqual(try other.request("POP"), "OK 4")
        XCTAssertEqual(try other.request("NEXT"), "OK 5")
        XCTAssertEqual(try other.request("ROOT"), "OK 5", "already at the root: no change, no line")
        XCTAssertEqual(try other.request("SELECT blue"), "OK 6")
        XCTAssertEqual(watch.waitForLines(7), [
            "0 state /red", "1 select /green", "2 push /green/blue:hello%20world", "3 open /red/blue",
            "4 pop /red", "5 next /green", "6 select /blue",
        ])

        watch.signal(SIGINT)
        XCTAssertEqual(watch.waitForExit(), 0)
    }

    func test_watch_resumesAfterADaemonRestart_printsTheMissedChanges_notTheStateAgain() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let statePath = directory.file("state.json")
        // Restarted on the same port below: held for the run (closedPort), so
        // no daemon of a test beside this one is given it while this one is away.
        let port = closedPort()
        var daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: statePath)
        defer { daemon.stop() }
        let watch = try StreamingProcess(Binaries.client, ["--connect", "127.0.0.1:\(port)", "watch"])
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["0 state /red"])
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(port)", "push", "blue", "kept"]).stdout, "1\n")
        XCTAssertEqual(watch.waitForLines(2).last, "1 push /red/blue:kept")

        daemon.signal(SIGKILL)
        daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: statePath)
        // Made while the watch is most likely still waiting to reconnect: it
        // gets them replayed after CONTINUE, or live if it was quicker; the
        // lines are the same either way, and no whole state comes again.
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(port)", "present", "green"]).stdout, "2\n")
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(port)", "pop"]).stdout, "3\n")
        XCTAssertEqual(watch.waitForLines(4), ["0 state /red", "1 push /red/blue:kept",
                                               "2 present /red/blue:kept#green", "3 pop /red#green"])
        // stderr is its own pipe: its lines may arrive after stdout's, so they are waited for.
        XCTAssertTrue(waitUntil { watch.stderr.contains("connection lost") }, "the loss is logged on stderr: \(watch.stderr)")
        XCTAssertTrue(waitUntil { watch.stderr.contains("continued after revision 1") }, "the resume is logged: \(watch.stderr)")

        watch.signal(SIGTERM)
        XCTAssertEqual(watch.waitForExit(), 0)
    }

    func test_watch_resyncedAfterARestartThatLostTheRevision_printsTheStateAgain() throws {
        // Restarted on the same port below: held for the run (closedPort), so
        // no daemon of a test beside this one is given it while this one is away.
        let port = closedPort()
        var daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: "none")
        defer { daemon.stop() }
        let watch = try StreamingProcess(Binaries.client, ["--connect", "127.0.0.1:\(port)", "watch"])
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["0 state /red"], "watching before the change is made")
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(port)", "push", "blue"]).stdout, "1\n")
        XCTAssertEqual(watch.waitForLines(2), ["0 state /red", "1 push /red/blue"])

        // Memory only: the new run starts again at revision 0, behind the watch.
        daemon.signal(SIGKILL)
        daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: "none")
        XCTAssertEqual(watch.waitForLines(3).last, "0 state /red", "a real resync prints the whole state")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.waitForExit(), 0)
    }

    func test_watch_feedsAWhileReadLoop_lineByLine() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        // The shell reads two lines, then stops reading: watch must notice the
        // closed pipe at its next line and end, so the whole pipeline ends.
        let script = """
            "$0" --connect 127.0.0.1:\(daemon.port) watch | while read rev op route; do
              echo "got $rev $op $route"
              [ "$op" = select ] && break
            done
            echo "loop done"
            """
        let pipeline = try StreamingProcess("/bin/sh", ["-c", script, Binaries.client])
        defer { pipeline.stop() }
        XCTAssertEqual(pipeline.waitForLines(1), ["got 0 state /red"])
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT green"), "OK 1\n")
        XCTAssertEqual(pipeline.waitForLines(2), ["got 0 state /red", "got 1 select /green"])
        // The reader is gone; the next line meets a closed pipe, watch exits,
        // and only then is the pipeline over.
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT blue"), "OK 2\n")
        XCTAssertEqual(pipeline.waitForLines(3).last, "loop done")
        XCTAssertEqual(pipeline.waitForExit(10), 0)
    }

    func test_watch_wrongToken_printsErrLine_andExitsOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let token = try directory.write("token", "right\n")
        let wrong = try directory.write("wrong", "wrong\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", token], state: "none")
        defer { daemon.stop() }
        let result = try navsync(["--connect", "127.0.0.1:\(daemon.port)", "--token-file", wrong, "watch"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.hasPrefix("ERR auth-failed"), result.stderr)
    }

    func test_watch_countAndTimeout_endTheWatchForScripts() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let watch = try StreamingProcess(Binaries.client, at + ["watch", "--count", "2", "--timeout", "20"])
        defer { watch.stop() }
        XCTAssertEqual(watch.waitForLines(1), ["0 state /red"])
        XCTAssertEqual(try navsync(at + ["select", "green"]).stdout, "1\n")
        XCTAssertEqual(try navsync(at + ["push", "blue"]).stdout, "2\n")
        XCTAssertEqual(watch.waitForExit(), 0, "two changes, then done")
        XCTAssertEqual(watch.lines, ["0 state /red", "1 select /green", "2 push /green/blue"])

        let quiet = try navsync(at + ["watch", "--timeout", "0.3"])
        XCTAssertEqual(quiet.status, 0, "a plain timeout is a normal end: \(quiet.stderr)")
        XCTAssertEqual(quiet.stdout, "2 state /green/blue\n")
        let short = try navsync(at + ["watch", "--count", "1", "--timeout", "0.3"])
        XCTAssertEqual(short.status, 1, "the count was not reached")
        XCTAssertTrue(short.stderr.contains("0 of 1 changes before the timeout"), short.stderr)
    }

    func test_watch_severalRooms_prefixEachLineWithItsRoom() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let watch = try StreamingProcess(Binaries.client, at + ["watch", "--room", "a", "--room", "b", "--count", "2"])
        defer { watch.stop() }
        XCTAssertEqual(Set(watch.waitForLines(2)), ["a 0 state /red", "b 0 state /red"])
        XCTAssertEqual(try navsync(at + ["--room", "b", "push", "blue"]).stdout, "1\n")
        XCTAssertEqual(watch.waitForLines(3).last, "b 1 push /red/blue")
        XCTAssertEqual(try navsync(at + ["select", "green"]).stdout, "1\n", "main is not watched")
        XCTAssertEqual(try navsync(at + ["--room", "a", "select", "green"]).stdout, "1\n")
        XCTAssertEqual(watch.waitForExit(), 0)
        XCTAssertEqual(watch.lines.count, 4, "\(watch.lines)")
        XCTAssertEqual(watch.lines.last, "a 1 select /green")
    }
}
