import ChildProcessHarness
import Foundation
import XCTest

/// The state file: acknowledged revisions survive `kill -9`, a graceful stop
/// says BYE and flushes, and a file the daemon cannot trust stops it.
final class DaemonPersistenceTests: XCTestCase {
    /// Drives several rooms to known stacks and returns each room's expected
    /// `STATE` line; the last change of every room is acknowledged right
    /// before the caller kills the daemon.
    private func makeChanges(_ daemon: DaemonProcess) throws -> [String: String] {
        let rooms = ["main", "kitchen", "hall.2", "Room_3-x"]
        var expected: [String: String] = [:]
        let clients = try rooms.map { _ in try daemon.connect() }
        for (i, (room, client)) in zip(rooms, clients).enumerated() {
            XCTAssertEqual(try client.request("JOIN \(room)"), "STATE 0 /red")
            XCTAssertEqual(try client.request("SELECT green"), "OK 1")
            XCTAssertEqual(try client.request("PUSH blue note \(i) h\u{E9}/llo"), "OK 2")
            for n in 0..<i { XCTAssertEqual(try client.request("PUSH red"), "OK \(3 + n)") }
            expected[room] = "\(2 + i) " + "/green/blue:note%20\(i)%20h%C3%A9%2Fllo" + String(repeating: "/red", count: i)
        }
        // A burst pipelined in one write over every room, read back in full.
        var burst = ""
        for room in rooms { burst += "JOIN \(room)\nNEXT\nOPEN /blue:last%20\(room)/green\n" }
        let last = clients[0]
        last.send(burst)
        let replies = try last.readLines(3 * rooms.count)
        for (i, room) in rooms.enumerated() {
            let before = Int(expected[room]!.split(separator: " ")[0])!
            XCTAssertEqual(Array(replies[(3 * i)..<(3 * i + 3)]),
                           ["STATE \(expected[room]!)", "OK \(before + 1)", "OK \(before + 2)"], room)
            expected[room] = "\(before + 2) /blue:last%20\(room)/green"
        }
        return expected
    }

    private func check(_ daemon: DaemonProcess, _ expected: [String: String],
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let client = try daemon.connect()
        for (room, state) in expected.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(try client.request("JOIN \(room)"), "STATE \(state)", room, file: file, line: line)
        }
        client.close()
    }

    /// Ends `daemon` the clean way (SIGTERM, exit status 0), then checks
    /// that a daemon started again on the same state (and environment)
    /// reads `expected`.
    private func checkAfterCleanRestart(_ daemon: DaemonProcess, state: String, environment: [String: String] = [:],
                                        _ expected: [String: String],
                                        file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(daemon.signal(SIGTERM), 0, file: file, line: line)
        let again = try DaemonProcess(state: state, environment: environment, file: file, line: line)
        defer { again.stop() }
        try check(again, expected, file: file, line: line)
    }

    func test_kill9_thenRestartOnSameStateFile_keepsAcknowledgedRevisionsOfEveryRoom() throws {
        for fsync in ["batch", "always"] {
            let dir = try TemporaryDirectory()
            defer { dir.remove() }
            let statePath = dir.file("state.json")
            let first = try DaemonProcess(arguments: ["--fsync", fsync], state: statePath)
            let expected = try makeChanges(first)
            kill(first.pid, SIGKILL)
            XCTAssertNotNil(first.waitForExit(5))
            first.stop()

            let second = try DaemonProcess(arguments: ["--fsync", fsync], state: statePath)
            defer { second.stop() }
            try check(second, expected)
            // Revisions go on from there, and survive a second crash.
            let client = try second.connect()
            XCTAssertEqual(try client.request("JOIN kitchen"), "STATE \(expected["kitchen"]!)")
            XCTAssertEqual(try client.request("POP"), "OK 6")
            kill(second.pid, SIGKILL)
            XCTAssertNotNil(second.waitForExit(5))
            client.close()

            let third = try DaemonProcess(state: statePath)
            defer { third.stop() }
            var after = expected
            after["kitchen"] = "6 /blue:last%20kitchen"
            try check(third, after)
        }
    }

    func test_kill9_afterJournalCompaction_keepsLastAcknowledged() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let statePath = dir.file("state.json")
        let daemon = try DaemonProcess(state: statePath)
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("JOIN side"), "STATE 0 /red")
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        XCTAssertEqual(try client.request("JOIN main"), "STATE 0 /red")
        // ~3 MB of changes: the appended tail passes its budget several times.
        let filler = String(repeating: "c", count: 3000)
        var written = 0
        for batch in 0..<20 {
            // Fifty to a write, so the test does not wait for a thousand fsyncs.
            let numbers = (1...50).map { batch * 50 + $0 }
            let script = numbers.map { "SELECT blue \($0) \(filler)\n" }.joined()
            written += script.utf8.count
            client.send(script)
            XCTAssertEqual(try client.readLines(50), numbers.map { "OK \($0)" })
        }
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: statePath)[.size] as? NSNumber).intValue
        XCTAssertLessThan(size, written / 2, "the state file was never compacted")
        kill(daemon.pid, SIGKILL)
        XCTAssertNotNil(daemon.waitForExit(5))
        client.close()

        let restarted = try DaemonProcess(state: statePath)
        defer { restarted.stop() }
        try check(restarted, ["main": "1000 /blue:1000%20\(filler)", "side": "1 /green"])
    }

    func test_restart_roomsLoadedFromStateCountTowardMaxRooms() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let statePath = dir.file("state.json")
        let first = try DaemonProcess(state: statePath)
        let client = try first.connect()
        for room in ["one", "two"] {
            XCTAssertEqual(try client.request("JOIN \(room)"), "STATE 0 /red")
            XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        }
        client.close()
        XCTAssertEqual(first.signal(SIGTERM), 0)

        let second = try DaemonProcess(arguments: ["--max-rooms", "2"], state: statePath)
        defer { second.stop() }
        let again = try second.connect()
        XCTAssertEqual(try again.request("JOIN three"), "STATE 0 /red")
        XCTAssertTrue(try again.request("SELECT blue").hasPrefix("ERR limit "))
        XCTAssertEqual(try again.request("JOIN two"), "STATE 1 /green")
        XCTAssertEqual(try again.request("SELECT blue"), "OK 2", "rooms that hold state may still change")
        XCTAssertTrue(try again.requestList("STATS").contains("STAT rooms 2"))
    }

    func test_sigterm_everyClientGetsBye_exitZeroWithinOneSecond_stateFlushed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let statePath = dir.file("state.json")
        let daemon = try DaemonProcess(state: statePath)
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let idle = try daemon.connect()
        let actor = try daemon.connect()
        XCTAssertEqual(try idle.request("PING"), "PONG")
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try actor.request("JOIN attic"), "STATE 0 /red")
        XCTAssertEqual(try actor.request("OPEN /green/blue:kept"), "OK 1")
        XCTAssertEqual(try actor.request("JOIN main"), "STATE 0 /red")
        XCTAssertEqual(try actor.request("SELECT blue bye"), "OK 1")
        XCTAssertEqual(try watcher.readLine(), "EVENT 1 select /blue:bye")
        // A watcher that never reads, with a backlog, must not hold the stop up.
        let stuck = try daemon.connect(receiveBufferBytes: 4096)
        XCTAssertEqual(try stuck.request("WATCH"), "STATE 1 /blue:bye")
        let filler = String(repeating: "z", count: 3000)
        for i in 0..<200 { XCTAssertEqual(try actor.request("SELECT blue \(i) \(filler)"), "OK \(i + 2)") }
        XCTAssertEqual(try watcher.readLines(200).count, 200)

        let started = Date()
        kill(daemon.pid, SIGTERM)
        let status = daemon.waitForExit(1.0)
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(status, 0, "not exited with status 0 within 1 s (took \(took)s); log:\n\(daemon.log)")
        XCTAssertTrue(daemon.exitedNormally)
        for (name, client) in [("watcher", watcher), ("idle", idle), ("actor", actor)] {
            XCTAssertEqual(try client.readUntilClosed(), ["BYE"], name)
        }
        stuck.close()

        let restarted = try DaemonProcess(state: statePath)
        defer { restarted.stop() }
        try check(restarted, ["attic": "1 /green/blue:kept", "main": "201 /blue:199%20\(filler)"])
    }

    func test_stateFileWriteFails_errInternal_nothingChanged_lastAcknowledgedKept() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let statePath = dir.file("state.json")
        // A file-size limit of a few KiB makes the journal's appends fail once it is reached.
        let daemon = try DaemonProcess(state: statePath, shellSetup: "ulimit -f 8")
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        let actor = try daemon.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        let filler = String(repeating: "f", count: 1000)
        var acknowledged: UInt64 = 0
        var refusal: String?
        for i in 1...100 {
            let reply = try actor.request("SELECT blue \(i) \(filler)")
            guard reply == "OK \(i)" else {
                refusal = reply
                break
            }
            acknowledged = UInt64(i)
            XCTAssertEqual(try watcher.readLine(), "EVENT \(i) select /blue:\(i)%20\(filler)")
        }
        let error = try XCTUnwrap(refusal, "the state file never filled up")
        XCTAssertTrue(error.hasPrefix("ERR internal "), error)
        XCTAssertGreaterThan(acknowledged, 0)
        let kept = "STATE \(acknowledged) /blue:\(acknowledged)%20\(filler)"
        XCTAssertEqual(try actor.request("GET"), kept, "nothing was changed")
        XCTAssertEqual(try watcher.request("PING"), "PONG", "no event for the refused change")
        XCTAssertTrue(daemon.process.isRunning)

        kill(daemon.pid, SIGKILL)
        XCTAssertNotNil(daemon.waitForExit(5))
        let restarted = try DaemonProcess(state: statePath)
        defer { restarted.stop() }
        try check(restarted, ["main": kept.replacingOccurrences(of: "STATE ", with: "")])
    }

    func test_sigint_alsoStopsGracefully() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("PING"), "PONG")
        // A bound on the wait, not a measure of speed: the one-second stop is
        // SignalsAndFilesTests' (with room); a loaded machine stretches this one.
        XCTAssertEqual(daemon.signal(SIGINT), 0)
        XCTAssertEqual(try client.readUntilClosed(), ["BYE"])
    }

    func test_stateFile_corrupt_exit1NamingFile_fileUntouched() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let cases = [
            "not json at all\n",
            "{\"navsync\":1,\"rooms\":{\"main\":{\"rev\":2,\"route\":\"/green\"}}}\ngarbage line\n",
            "{\"navsync\":1,\"rooms\":{\"main\":{\"rev\":2,\"route\":\"no-slash\"}}}\n",
            "{\"navsync\":1,\"rooms\":{\"main\":{\"rev\":2,\"route\":\"/green\"}}}\n{\"room\":\"main\",\"rev\":7,\"route\":\"/red\"}\n",
            "[1, 2, 3]\n",
        ]
        for (i, text) in cases.enumerated() {
            let path = try dir.write("state-\(i).json", text)
            let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", path])
            XCTAssertEqual(result.status, 1, "case \(i): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(path), "case \(i) does not name the file: \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("listening on"), "case \(i)")
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text, "case \(i): the file was changed")
        }
        // A directory where the file should be is unreadable, not fresh.
        let directory = dir.file("a-directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", directory])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains(directory), result.stderr)
    }

    func test_stateFile_defaultPathMissing_startsFresh_andCreatesDirectories() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let base = dir.file("deeper/still")
        let env = ["XDG_STATE_HOME": base, "HOME": dir.path]
        let statePath = base + "/navsync/state.json"
        let daemon = try DaemonProcess(state: DaemonProcess.defaultState, environment: env)
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        XCTAssertTrue(FileManager.default.fileExists(atPath: statePath))
        client.close()
        try checkAfterCleanRestart(daemon, state: DaemonProcess.defaultState, environment: env, ["main": "1 /green"])
    }

    /// A path the operator typed whose directory is missing is a mistake,
    /// not a fresh start: exit 1 naming the directory, nothing created.
    func test_stateFile_givenPathInMissingDirectory_exit1NamingIt_createsNothing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for missing in [dir.file("typo"), dir.file("typo/deeper")] {
            let statePath = missing + "/x.json"
            let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", statePath])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("directory \(missing) does not exist"), result.stderr)
            XCTAssertFalse(result.stderr.contains("listening on"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("typo")), "no directory was made")
        }
        // A relative path in the current directory needs no directory at all.
        let daemon = try DaemonProcess(state: "x.json", shellSetup: "cd '\(dir.path)'")
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.connect().request("SELECT green"), "OK 1")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.file("x.json")))
    }

    /// A symlink planted where the daemon writes its temporary snapshot must
    /// not make it write through the link: the target stays as it was, the
    /// link is replaced, and the state file is private (0600). Checked at
    /// start (the first snapshot) and at a compaction while running.
    func test_stateFile_symlinkAtTemporaryPath_targetUntouched_linkReplaced_mode0600() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let victim = try dir.write("victim", "precious\n")
        chmod(victim, 0o644)
        let statePath = dir.file("state.json")
        let temporary = statePath + ".tmp"
        func checkFiles(_ when: String) throws {
            XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious\n", when)
            var info = stat()
            XCTAssertEqual(lstat(victim, &info), 0)
            XCTAssertEqual(info.st_mode & 0o777, 0o644, "\(when): the victim's mode is as it was")
            XCTAssertEqual(lstat(statePath, &info), 0)
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "\(when): the state file is a file of its own")
            XCTAssertEqual(info.st_mode & 0o777, 0o600, "\(when): the state file is private")
            XCTAssertNotEqual(lstat(temporary, &info), 0, "\(when): the link is gone")
        }
        XCTAssertEqual(symlink(victim, temporary), 0)
        let daemon = try DaemonProcess(state: statePath)
        defer { daemon.stop() }
        try checkFiles("at start")

        XCTAssertEqual(symlink(victim, temporary), 0)
        let client = try daemon.connect()
        // Changes past the compaction threshold (1 MiB of change lines) in a
        // room whose snapshot stays small: the daemon rewrites the file.
        let padding = String(repeating: "x", count: 3_000)
        var revision = 0
        for batch in 0..<24 {
            client.send((0..<16).map { "OPEN /red/blue:\(batch)-\($0)-\(padding)\n" }.joined())
            for _ in 0..<16 {
                revision += 1
                XCTAssertEqual(try client.readLine(), "OK \(revision)")
            }
        }
        var info = stat()
        XCTAssertTrue(waitUntil { lstat(temporary, &info) != 0 }, "the daemon compacted, replacing the link")
        try checkFiles("after a compaction")
        XCTAssertEqual(try client.request("GET"), "STATE \(revision) /red/blue:23-15-\(padding)")
        client.close()
        try checkAfterCleanRestart(daemon, state: statePath, ["main": "\(revision) /red/blue:23-15-\(padding)"])
    }

    /// A room read from the file at the largest revision there is: the daemon
    /// starts, the room reads as it is, a change is refused with `limit`
    /// (a no-op still answers), and the daemon and other rooms carry on.
    func test_stateFile_roomAtLargestRevision_readsAndRefusesChanges_daemonStaysUp() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let top = "18446744073709551615"
        let statePath = try dir.write("state.json", #"{"navsync":2,"rooms":{"main":{"rev":\#(top),"route":"/red"}}}"# + "\n")
        let daemon = try DaemonProcess(state: statePath)
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("GET"), "STATE \(top) /red")
        let refused = try client.request("SELECT green")
        XCTAssertTrue(refused.hasPrefix("ERR limit ") && refused.contains("maximum"), refused)
        XCTAssertEqual(try client.request("SELECT red"), "OK \(top)", "a no-op answers the revision as it is")
        XCTAssertTrue(try client.request("IF \(top) PUSH blue").hasPrefix("ERR limit "))
        XCTAssertEqual(try client.request("WATCH \(top)"), "CONTINUE \(top)")
        XCTAssertEqual(try client.request("WATCH 5"), "STATE \(top) /red")
        let other = try daemon.connect()
        XCTAssertEqual(try other.request("PING"), "PONG")
        XCTAssertEqual(try other.request("JOIN elsewhere"), "STATE 0 /red")
        XCTAssertEqual(try other.request("SELECT green"), "OK 1")
        XCTAssertEqual(try client.request("GET"), "STATE \(top) /red")
        client.close()
        other.close()
        try checkAfterCleanRestart(daemon, state: statePath, ["main": "\(top) /red", "elsewhere": "1 /green"])
    }

    func test_stateFile_empty_startsFreshWithInfoLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let statePath = try dir.write("state.json", "")
        let daemon = try DaemonProcess(state: statePath)
        defer { daemon.stop() }
        XCTAssertTrue(daemon.log.contains("info state file \(statePath) is empty; starting fresh"), daemon.log)
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        client.close()
        try checkAfterCleanRestart(daemon, state: statePath, ["main": "1 /green"])
    }

    func test_stateNone_keepsNothingAcrossRestarts() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = ["XDG_STATE_HOME": dir.path, "HOME": dir.path]
        let daemon = try DaemonProcess(state: "none", environment: env)
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        XCTAssertEqual(try client.request("GET"), "STATE 1 /green")
        XCTAssertTrue(try client.requestList("STATS").contains("STAT rooms 1"))
        client.close()
        XCTAssertEqual(daemon.signal(SIGTERM), 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "no state file anywhere")
        let again = try DaemonProcess(state: "none", environment: env)
        defer { again.stop() }
        try check(again, ["main": "0 /red"])
    }
}
