import ChildProcessHarness
import Foundation
import Glibc
import XCTest

/// Guessing is throttled per address, on every door, while another
/// address goes on as before; and a flood of connections is summarised in
/// the log instead of flooding it. The daemon sees 127.0.0.2 and 127.0.0.1
/// as two peers (both loopback, neither exempt).
final class GuessingThrottleTests: XCTestCase {
    private static let presenter = "presenter-token-5f0c2b7e"

    private func tokensDaemon(_ dir: TemporaryDirectory, extra: [String] = []) throws -> DaemonProcess {
        let path = try dir.write("grants", "control * \(Self.presenter) presenter\n")
        chmod(path, 0o600)
        return try DaemonProcess(arguments: ["--tokens", path] + extra, state: "none")
    }

    /// 21 wrong tokens from `source`, three to a connection (the third closes it).
    private func guess21(_ daemon: DaemonProcess, from source: String) throws {
        for connection in 0..<7 {
            let guesser = try LineClient(port: daemon.port, source: source)
            for attempt in 0..<3 {
                XCTAssertEqual(try guesser.request("AUTH guess-\(connection)-\(attempt)-0000000000"), "ERR auth-failed wrong token")
            }
            guesser.close()
        }
    }

    func test_guessing_pastTwentyInTenSeconds_throttlesThatAddressOnEveryDoor_notAnother() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try tokensDaemon(dir)
        defer { daemon.stop() }
        try guess21(daemon, from: "127.0.0.2")

        // The line protocol: even the right token is not looked at.
        let line = try LineClient(port: daemon.port, source: "127.0.0.2")
        let refused = try line.request("AUTH \(Self.presenter)")
        XCTAssertTrue(refused.hasPrefix("ERR auth-failed throttled, retry in "), refused)
        let seconds = refused.split(separator: " ").dropFirst(5).first.flatMap { Int($0) } ?? 0
        XCTAssertTrue((1...10).contains(seconds), refused)
        XCTAssertTrue(try line.request("GET").hasPrefix("ERR auth-required "))
        // A Bearer header: 401 saying when to come back.
        let web = try LineClient(port: daemon.port, source: "127.0.0.2")
        let reply = try web.get("/metrics", headers: [("Authorization", "Bearer \(Self.presenter)")])
        XCTAssertEqual(reply.status, 401)
        XCTAssertNotNil(reply.headers["retry-after"].flatMap { Int($0) }, "\(reply.headers)")
        // A WebSocket's AUTH line.
        let socket = try LineClient(port: daemon.port, source: "127.0.0.2")
        XCTAssertEqual(try socket.upgrade().status, 101)
        socket.sendText("AUTH \(Self.presenter)")
        XCTAssertTrue(try socket.readText().hasPrefix("ERR auth-failed throttled, retry in "))

        // Another address is not touched, and the figures say what happened.
        let admin = try LineClient(port: daemon.port, source: "127.0.0.1")
        XCTAssertEqual(try admin.request("AUTH \(Self.presenter)"), "OK 0")
        let stats = try admin.requestList("STATS")
        XCTAssertTrue(stats.contains("STAT auth_throttled 3"), "\(stats)")
        XCTAssertTrue(stats.contains("STAT auth_failures 24"), "\(stats)")
        let metrics = try LineClient(port: daemon.port, source: "127.0.0.1")
            .get("/metrics", headers: [("Authorization", "Bearer \(Self.presenter)")])
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(metrics.text.contains("\nnavsync_auth_throttled_total 3\n"), metrics.text)
        XCTAssertFalse(daemon.log.contains(Self.presenter), "a token is never logged")
    }

    func test_guessing_theTerminalClientsOneShot_waitsOutTheThrottle_thenSucceeds() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try tokensDaemon(dir)
        defer { daemon.stop() }
        // The one-shot connects from 127.0.0.1, so that is the address that guesses.
        try guess21(daemon, from: "127.0.0.1")
        let tokenFile = try dir.write("token", Self.presenter + "\n")
        chmod(tokenFile, 0o600)
        let result = try runProcess(Binaries.client, ["--connect", "127.0.0.1:\(daemon.port)", "--token-file", tokenFile, "get"],
                                    timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "/red\n")
        XCTAssertTrue(result.stderr.contains("ERR auth-failed throttled, retry in "), result.stderr)
    }

    func test_connectionLog_aFloodOfConnections_isSummarisedPastFiftyLinesASecond_countingEveryOne() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let flood = 600
        for _ in 0..<flood {
            try LineClient(port: daemon.port).close()
        }
        // Every connection is in the log: its own two lines, or a summary's count.
        func accounted() -> (opened: Int, closed: Int, summaries: Int) {
            let lines = daemon.log.split(separator: "\n")
            var opened = lines.filter { $0.contains(" connected (") }.count
            var closed = lines.filter { $0.contains(") closed: ") }.count
            var summaries = 0
            for line in lines {
                guard let range = line.range(of: "… and ") else { continue }
                let words = line[range.upperBound...].split(separator: " ")
                guard words.count >= 6, let more = Int(words[0]), let fewer = Int(words[4]) else { continue }
                opened += more
                closed += fewer
                summaries += 1
            }
            return (opened, closed, summaries)
        }
        XCTAssertTrue(waitUntil(timeout: 20) { accounted().opened == flood && accounted().closed == flood },
                      "\(accounted()) of \(flood)")
        let (_, _, summaries) = accounted()
        XCTAssertGreaterThan(summaries, 0, "a flood of \(flood) connections was summarised")
        let written = daemon.log.split(separator: "\n").filter { $0.contains(" connected (") || $0.contains(") closed: ") }.count
        XCTAssertLessThan(written, 2 * flood)
        print("connection log: \(flood) connections opened and closed, \(written) lines written, \(summaries) summary lines")
    }
}
