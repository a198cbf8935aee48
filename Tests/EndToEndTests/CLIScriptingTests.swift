import ChildProcessHarness
import Foundation
import XCTest

/// The `navsync` commands a `redis-cli` user reaches for: the revision with
/// the route, compare-and-set, figures, ping, raw protocol lines, and a
/// daemon that is not there (yet).
final class CLIScriptingTests: XCTestCase {
    func test_state_printsRevisionAndRoute_andIfIsCompareAndSet() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        XCTAssertEqual(try navsync(at + ["state"]).stdout, "0 /red\n")
        XCTAssertEqual(try navsync(at + ["push", "blue", "a", "note"]).stdout, "1\n")
        XCTAssertEqual(try navsync(at + ["state"]).stdout, "1 /red/blue:a%20note\n")

        let applied = try navsync(at + ["if", "1", "push", "green"])
        XCTAssertEqual(applied.status, 0, applied.stderr)
        XCTAssertEqual(applied.stdout, "2\n")
        let stale = try navsync(at + ["if", "1", "pop"])
        XCTAssertEqual(stale.status, 1)
        XCTAssertEqual(stale.stdout, "")
        XCTAssertEqual(stale.stderr, "ERR conflict current=2\n")
        XCTAssertEqual(try navsync(at + ["state"]).stdout, "2 /red/blue:a%20note/green\n", "the stale change did nothing")
    }

    func test_rooms_listsRoomsWithState_nameRevisionRoute() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        XCTAssertEqual(try navsync(at + ["rooms"]).stdout, "", "no room changed yet")
        XCTAssertEqual(try navsync(at + ["--room", "lobby", "push", "blue", "hi"]).stdout, "1\n")
        XCTAssertEqual(try navsync(at + ["select", "green"]).stdout, "1\n")
        XCTAssertEqual(try navsync(at + ["select", "blue"]).stdout, "2\n")
        XCTAssertEqual(try navsync(at + ["--room", "quiet", "get"]).stdout, "/red\n", "reading creates no room")
        let rooms = try navsync(at + ["rooms"])
        XCTAssertEqual(rooms.status, 0, rooms.stderr)
        XCTAssertEqual(rooms.stdout, "lobby 1 /red/blue:hi\nmain 2 /blue\n")
    }

    func test_presentAndDismiss_changeTheSheets_printTheRevision() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        XCTAssertEqual(try navsync(at + ["present", "blue", "a", "note"]).stdout, "1\n")
        XCTAssertEqual(try navsync(at + ["state"]).stdout, "1 /red#blue:a%20note\n")
        XCTAssertEqual(try navsync(at + ["if", "1", "dismiss"]).stdout, "2\n")
        let none = try navsync(at + ["dismiss"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.hasPrefix("ERR no-sheet"), none.stderr)
        XCTAssertEqual(try navsync(at + ["dismiss", "now"]).status, 64)
    }

    func test_statsAndPing_printTheDaemonsAnswers() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let stats = try navsync(at + ["stats"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let keys = stats.stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        for key in ["version", "uptime_s", "connections", "watchers", "watchers_total", "rooms", "rev"] {
            XCTAssertTrue(keys.contains(key), "\(key) missing from:\n\(stats.stdout)")
        }
        XCTAssertTrue(stats.stdout.contains("\nconnections 1\n"), stats.stdout)
        XCTAssertEqual(try navsync(at + ["ping"]).stdout, "PONG\n")
        XCTAssertEqual(try navsync(at + ["ping", "are", "you", "there"]).stdout, "PONG are you there\n")
    }

    func test_raw_sendsLinesAsTheyAre_printsEveryAnswer_exitOneOnAnyErr() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let fine = try navsync(at + ["raw", "PUSH blue x y", "get"])
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertEqual(fine.stdout, "OK 1\nSTATE 1 /red/blue:x%20y\n")

        let refused = try navsync(at + ["raw", "POP", "POP", "GET"])
        XCTAssertEqual(refused.status, 1, "an ERR among the answers")
        XCTAssertEqual(refused.stdout.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") },
                       ["OK 2", "ERR at-root", "STATE 2"], refused.stdout)

        // From a pipe, with --room carried out first and its answer not printed.
        let piped = try runProcess(Binaries.client, at + ["--room", "lab", "raw"], stdin: "SELECT green\nget\n")
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(piped.stdout, "OK 1\nSTATE 1 /green\n")
        XCTAssertEqual(try navsync(at + ["--room", "lab", "get"]).stdout, "/green\n")
        XCTAssertEqual(try navsync(at + ["get"]).stdout, "/red\n", "main untouched")
    }

    func test_raw_addressList_usesTheFirstThatAnswers_andNamesTheFirstWhenNoneDoes() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let dead = closedPort()
        let list = "127.0.0.1:\(dead),127.0.0.1:\(daemon.port)"
        let fine = try navsync(["--connect", list, "raw", "PING listed"])
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertEqual(fine.stdout, "PONG listed\n")

        let none = try navsync(["--connect", "127.0.0.1:\(dead),127.0.0.1:\(closedPort())", "raw", "PING"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("cannot connect to any address, the first was 127.0.0.1:\(dead)"), none.stderr)
    }

    func test_raw_refusedRoomOrToken_sendsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let token = try directory.write("token", "right\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", token], state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let noToken = try navsync(at + ["raw", "SELECT green"])
        XCTAssertEqual(noToken.status, 1)
        XCTAssertTrue(noToken.stdout.hasPrefix("ERR auth-required"), "the daemon's answer, printed: \(noToken.stdout)")
        let withToken = try navsync(at + ["--token-file", token, "raw", "GET"])
        XCTAssertEqual(withToken.stdout, "STATE 0 /red\n", withToken.stderr)
        let wrong = try directory.write("wrong", "guess\n")
        let refused = try navsync(at + ["--token-file", wrong, "raw", "SELECT green"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertTrue(refused.stderr.hasPrefix("ERR auth-failed"), refused.stderr)
        XCTAssertEqual(try navsync(at + ["--token-file", token, "get"]).stdout, "/red\n", "nothing was sent after the refusal")
    }

    func test_neverConnected_watchAndOneShot_sayCannotConnect_exitOne() throws {
        let port = closedPort()
        for command in [["watch"], ["get"], ["raw", "GET"]] {
            let result = try navsync(["--connect", "127.0.0.1:\(port)"] + command)
            XCTAssertEqual(result.status, 1, "\(command): \(result.stderr)")
            XCTAssertEqual(result.stdout, "")
            XCTAssertTrue(result.stderr.contains("cannot connect to 127.0.0.1:\(port)"), "\(command): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("connection lost"), result.stderr)
        }
    }

    func test_retry_waitsForADaemonThatComesLater() throws {
        let port = closedPort()
        let at = ["--connect", "127.0.0.1:\(port)", "--retry"]
        let watch = try StreamingProcess(Binaries.client, at + ["watch"])
        defer { watch.stop() }
        let oneShot = try StreamingProcess(Binaries.client, at + ["push", "blue", "late"])
        defer { oneShot.stop() }
        XCTAssertTrue(waitUntil { watch.stderr.contains("cannot connect to 127.0.0.1:\(port)") }, watch.stderr)
        XCTAssertTrue(oneShot.process.isRunning, "still trying")
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: "none")
        defer { daemon.stop() }
        XCTAssertEqual(oneShot.waitForLines(1), ["1"])
        XCTAssertEqual(oneShot.waitForExit(), 0)
        let lines = watch.waitForLines(1)
        XCTAssertTrue(["0 state /red", "1 state /red/blue:late"].contains(lines[0]), "\(lines)")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.waitForExit(), 0)
    }
}
