import Foundation
import Glibc
import XCTest

/// A daemon meant to run for months meets scripts that connect, do one thing
/// and leave, all day. Each kind of short connection is repeated 100,000
/// times against one daemon; afterwards every connection object must have
/// been freed (STATS `live_sessions` and `live_links` count the ones still in
/// memory) and the resident size must not have grown by more than 1 MB since
/// the first 10,000 cycles (the allocator's pools are warm by then).
///
/// The client is a plain blocking-socket loop on one thread, so a cycle
/// costs about what the daemon needs for it: 100,000 take a few seconds.
/// Under the ASan daemon (NAVSYNC_SANITIZED=1) fewer cycles are run and
/// memory is reported, not asserted; its leak report at SIGTERM is the check.
final class ChurnTests: XCTestCase {
    static var cycles: Int { Hardening.sanitized ? 10_000 : 100_000 }
    static let growthAllowanceKiB = 1024
    static let pacingCycles = 100

    func test_churn_getAndQuit_everyObjectFreed_memoryFlat() throws {
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "warn"])
        defer { daemon.stop() }
        try churn(daemon, kind: "GET and QUIT") { fd, _ in
            Hardening.sendAll(fd, Array("GET\nQUIT\n".utf8))
            let reply = Self.readLines(fd, 2)
            close(fd)
            return reply == "STATE 0 /red\nBYE\n"
        }
    }

    func test_churn_watching_everyObjectFreed_memoryFlat() throws {
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "warn"])
        defer { daemon.stop() }
        try churn(daemon, kind: "WATCH, sometimes a change, QUIT") { fd, i in
            // Every other watcher makes a change of its own room (green and
            // blue in turn, so none is a no-op) and so receives its event
            // before it leaves.
            if i % 2 == 0 {
                Hardening.sendAll(fd, Array("WATCH\nQUIT\n".utf8))
                let reply = Self.readLines(fd, 2)
                close(fd)
                return reply.hasPrefix("STATE ") && reply.hasSuffix("\nBYE\n")
            }
            Hardening.sendAll(fd, Array("WATCH\nSELECT \(i % 4 == 1 ? "green" : "blue")\nQUIT\n".utf8))
            let reply = Self.readLines(fd, 4)
            close(fd)
            return reply.contains("\nEVENT ") && reply.hasSuffix("\nBYE\n")
        }
    }

    func test_churn_refusedBusy_everyObjectFreed_memoryFlat() throws {
        // Two slots: the checker connection churn() opens, and one held here.
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "error", "--max-clients", "2"])
        defer { daemon.stop() }
        let holder = try daemon.connect()
        XCTAssertEqual(try holder.request("PING"), "PONG")
        try churn(daemon, kind: "refused with ERR busy", expectedConnections: 2) { fd, _ in
            let reply = Self.readLines(fd, 1)
            close(fd)
            return reply.hasPrefix("ERR busy ")
        }
        withExtendedLifetime(holder) {}
    }

    func test_churn_resetByPeer_everyObjectFreed_memoryFlat() throws {
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "warn"])
        defer { daemon.stop() }
        try churn(daemon, kind: "reset by the peer (SO_LINGER 0)") { fd, i in
            // At once, after a command, and as a watcher whose reply may
            // still be on its way.
            switch i % 3 {
            case 0: break
            case 1: Hardening.sendAll(fd, Array("GET\n".utf8))
            default: Hardening.sendAll(fd, Array("WATCH\n".utf8))
            }
            Hardening.resetAndClose(fd)
            return true
        }
    }

    /// Browsers and monitoring: plain HTTP requests that close, and
    /// WebSockets that watch and quit. Fewer cycles: each one is a whole
    /// HTTP exchange (and a SHA-1 for the handshake).
    func test_churn_httpAndWebSocket_everyObjectFreed_memoryFlat() throws {
        let daemon = try Hardening.Daemon(statePath: "none", arguments: ["--log-level", "warn"])
        defer { daemon.stop() }
        let upgrade = Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
        // "WATCH\nQUIT" as one masked text frame (mask 1 2 3 4).
        let message = Array("WATCH\nQUIT".utf8)
        let frame: [UInt8] = [0x81, 0x80 | UInt8(message.count), 1, 2, 3, 4]
            + message.enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) }
        try churn(daemon, kind: "HTTP GET with Connection: close, and WebSocket WATCH + QUIT", cycles: Self.cycles / 5) { fd, i in
            if i % 2 == 0 {
                Hardening.sendAll(fd, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
                let reply = Self.readLines(fd, .max)
                close(fd)
                return reply.hasPrefix("HTTP/1.1 200 OK\r\n") && reply.hasSuffix("\r\n\r\nok")
            }
            Hardening.sendAll(fd, upgrade + frame)
            let reply = Self.readLines(fd, .max)
            close(fd)
            // The 101, then STATE and BYE as text frames, then the close frame and the end.
            return reply.hasPrefix("HTTP/1.1 101 ") && reply.contains("STATE 0 /red") && reply.contains("BYE")
        }
    }

    // MARK: - The loop

    /// Runs `cycle` (connect first) `cycles` times, then checks with a
    /// connection of its own that only the expected connections are open and
    /// in memory, and that RSS stayed within the allowance.
    ///
    /// Every `pacingCycles` the same connection waits for a `PONG`: the
    /// daemon has then taken in every connection made before it. Without
    /// that, a client that resets at once can run far ahead, thousands of
    /// connections wait in the listen backlog, and how many the daemon
    /// happens to hold at one time — the heap's high-water mark — swings the
    /// RSS by more than the allowance from run to run, leak or no leak.
    private func churn(_ daemon: Hardening.Daemon, kind: String, expectedConnections: Int = 1,
                       cycles: Int = ChurnTests.cycles, cycle: (Int32, Int) -> Bool) throws {
        let checker = try daemon.connect()
        var failures = 0
        var warmKiB = 0
        let started = Date()
        for i in 0..<cycles {
            if i % Self.pacingCycles == 0 {
                XCTAssertEqual(try checker.request("PING"), "PONG")
            }
            if i == cycles / 10 {
                warmKiB = settledResidentKiB(daemon)
            }
            guard let fd = try? Hardening.connectSocket(port: daemon.port) else {
                failures += 1
                continue
            }
            if !cycle(fd, i) { failures += 1 }
        }
        let seconds = Date().timeIntervalSince(started)
        let client = checker
        var figures: [String: String] = [:]
        let settled = HostileClientTests.waitFor(timeout: 30) {
            figures = (try? Self.stats(client)) ?? [:]
            let open = String(expectedConnections)
            return figures["connections"] == open && figures["live_sessions"] == open && figures["live_links"] == open
        }
        XCTAssertTrue(settled, "\(kind): only \(expectedConnections) connection(s) open and in memory; STATS says "
                      + "connections \(figures["connections"] ?? "-"), live_sessions \(figures["live_sessions"] ?? "-"), "
                      + "live_links \(figures["live_links"] ?? "-")")
        let afterKiB = settledResidentKiB(daemon)
        XCTAssertEqual(failures, 0, "\(kind): every cycle got its expected reply")
        print("churn, \(kind): \(cycles) cycles in \(String(format: "%.1f", seconds)) s;",
              "RSS \(warmKiB) KiB after \(cycles / 10), \(afterKiB) KiB after \(cycles)")
        if !Hardening.sanitized {
            XCTAssertLessThanOrEqual(afterKiB, warmKiB + Self.growthAllowanceKiB,
                                     "\(kind): RSS grew from \(warmKiB) KiB to \(afterKiB) KiB")
        }
        withExtendedLifetime(client) {}
    }

    /// RSS once the daemon has finished with the connections just closed
    /// (lingering ones close within the daemon's 2 s grace).
    private func settledResidentKiB(_ daemon: Hardening.Daemon) -> Int {
        var last = daemon.residentKiB
        for _ in 0..<20 {
            usleep(50_000)
            let now = daemon.residentKiB
            if now == last { return now }
            last = now
        }
        return last
    }

    /// Reads until `count` newlines have arrived, the peer closes, or 20 s
    /// pass (a bound for a loaded machine, where a 5 s one could fail a
    /// cycle); returns what was read.
    static func readLines(_ fd: Int32, _ count: Int) -> String {
        var received: [UInt8] = []
        var newlines = 0
        var chunk = (0..<512).map { _ in UInt8(0) }
        let deadline = Date().addingTimeInterval(20)
        while newlines < count && Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 1000) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received.append(contentsOf: chunk[..<n])
            newlines += chunk[..<n].filter { $0 == 10 }.count
        }
        return String(decoding: received, as: UTF8.self)
    }

    static func stats(_ client: LineClient) throws -> [String: String] {
        var figures: [String: String] = [:]
        var line = try client.request("STATS")
        while line != "END" {
            let parts = line.split(separator: " ", maxSplits: 2)
            if parts.count == 3 { figures[String(parts[1])] = String(parts[2]) }
            line = try client.readLine()
        }
        return figures
    }
}
