import Foundation
import Glibc
import XCTest

/// `WATCH <rev>` against the real daemon: a watcher that drops its
/// connection while others keep changing the room, and one whose daemon is
/// killed and restarted.
final class DaemonResumeTests: XCTestCase {
    /// The revision of an `EVENT` or `STATE` line, or of `CONTINUE`.
    private func revision(_ line: String) -> UInt64? {
        let parts = line.split(separator: " ")
        guard parts.count >= 2, ["EVENT", "STATE", "CONTINUE"].contains(parts[0]) else { return nil }
        return UInt64(parts[1])
    }

    /// Reads lines until one carries `target` (bounded).
    private func read(_ client: LineClient, through target: UInt64) throws -> [String] {
        var lines: [String] = []
        while lines.last.flatMap(revision) != target {
            lines.append(try client.readLine(timeout: 20))
        }
        return lines
    }

    func test_resume_whileOthersWrite_isGapFree() throws {
        let daemon = try DaemonProcess(arguments: ["--log-level", "warn"])
        let changes: UInt64 = 600
        let first = try daemon.connect()
        XCTAssertEqual(try first.request("WATCH"), "STATE 0 /red")
        let port = daemon.port
        // Changes go on from another thread while the watcher comes and goes.
        let writer = Thread {
            guard let actor = try? LineClient(port: port) else { return }
            for i in 1...changes {
                _ = try? actor.request(i % 2 == 0 ? "POP" : "PUSH blue \(i)")
            }
        }
        writer.start()

        var seen: [UInt64] = []
        var last: UInt64 = 0
        // Three connections: each reads a while, then vanishes mid-stream.
        for round in 0..<3 {
            let watcher = round == 0 ? first : try daemon.connect()
            if round > 0 {
                XCTAssertEqual(try watcher.request("WATCH \(last)"), "CONTINUE \(last)",
                               "the daemon holds the last 1024 changes")
            }
            for _ in 0..<(40 + round * 30) {
                let line = try watcher.readLine(timeout: 20)
                guard line.hasPrefix("EVENT "), let rev = revision(line) else { return XCTFail("unexpected \(line)") }
                seen.append(rev)
                last = rev
            }
            watcher.close()
        }
        let tail = try daemon.connect()
        tail.send("WATCH \(last)\n")
        XCTAssertEqual(try tail.readLine(), "CONTINUE \(last)")
        for line in try read(tail, through: changes) {
            if let rev = revision(line) { seen.append(rev) }
        }
        XCTAssertEqual(seen, Array(1...changes), "every revision once, in order, across four connections")
    }

    func test_resume_afterKill9AndRestart_continuesFromTheStateFilesTail_orResyncs() throws {
        let directory = NSTemporaryDirectory() + "navsync-resume-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let statePath = directory + "/state.json"
        var daemon = try DaemonProcess(statePath: statePath, arguments: ["--log-level", "warn"])
        let actor = try daemon.connect(), current = try daemon.connect(), lagging = try daemon.connect()
        XCTAssertEqual(try current.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try lagging.request("WATCH"), "STATE 0 /red")
        for i in 1...30 { XCTAssertEqual(try actor.request("PRESENT blue \(i)"), "OK \(i)") }
        let seen = try current.readLines(30)
        XCTAssertEqual(seen.last.flatMap(revision), 30)
        XCTAssertEqual(try lagging.readLines(20).last.flatMap(revision), 20, "this one has applied only 20")
        daemon.signal(SIGKILL)

        daemon = try DaemonProcess(statePath: statePath, arguments: ["--log-level", "warn"])
        let expected = try daemon.connect().request("GET")
        XCTAssertTrue(expected.hasPrefix("STATE 30 "), expected)
        // Up to date: nothing was missed, and the daemon may say so.
        let again = try daemon.connect()
        XCTAssertEqual(try again.request("WATCH 30"), "CONTINUE 30")
        // Behind: the changes since the file's last snapshot were read back
        // into the history, so the very lines it missed come again.
        let behind = try daemon.connect()
        XCTAssertEqual(try behind.request("WATCH 20"), "CONTINUE 20")
        XCTAssertEqual(try behind.readLines(10), Array(seen[20...]), "the same EVENT lines as before the crash")
        // Ahead of the daemon (it lost nothing here, but a client may be): resync.
        XCTAssertEqual(try daemon.connect().request("WATCH 31"), expected)
        // Either way both now see the next change.
        XCTAssertEqual(try daemon.connect().request("DISMISS"), "OK 31")
        XCTAssertTrue(try again.readLine().hasPrefix("EVENT 31 dismiss "))
        XCTAssertTrue(try behind.readLine().hasPrefix("EVENT 31 dismiss "))

        // Starting rewrites the file as one snapshot, so after a second
        // restart only the change made since the first one can be replayed.
        daemon.signal(SIGKILL)
        daemon = try DaemonProcess(statePath: statePath, arguments: ["--log-level", "warn"])
        let resumer = try daemon.connect()
        XCTAssertEqual(try resumer.request("WATCH 30"), "CONTINUE 30")
        XCTAssertTrue(try resumer.readLine().hasPrefix("EVENT 31 dismiss "))
        XCTAssertTrue(try daemon.connect().request("WATCH 29").hasPrefix("STATE 31 "), "older than the tail: resync")
    }
}
