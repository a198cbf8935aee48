import ChildProcessHarness
import Foundation
import XCTest

/// `navsyncd`'s flags and start-up failures, as a supervisor or script sees them.
final class DaemonCommandLineTests: XCTestCase {
    /// Runs the daemon with arguments that must make it exit at once.
    private func run(_ arguments: [String]) throws -> RunResult {
        try runProcess(Binaries.daemon, arguments)
    }

    private func nonEmptyLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }
    }

    func test_flags_badUsage_exit64WithOneLineHint() throws {
        let safe = ["--listen", "127.0.0.1:0", "--state", "none"]
        let cases: [[String]] = [
            safe + ["--bogus"],
            safe + ["-x"],
            safe + ["stray-argument"],
            ["--listen", "127.0.0.1:0", "--state"],
            safe + ["--screens"],
            safe + ["--fsync", "sometimes"],
            safe + ["--fsync=sometimes"],
            safe + ["--max-line", "abc"],
            safe + ["--max-line", "10"],
            safe + ["--max-line", "63"],
            safe + ["--max-clients", "0"],
            safe + ["--max-pending", "-5"],
            safe + ["--max-depth", "0"],
            safe + ["--max-rooms", "lots"],
            safe + ["--history", "0"],
            safe + ["--history", "-1"],
            safe + ["--history-bytes", "0"],
            safe + ["--keepalive", "-5"],
            safe + ["--keepalive", "soon"],
            safe + ["--keepalive", "40000"],
            safe + ["--log-level", "chatty"],
            ["--listen", "nowhere", "--state", "none"],
            ["--listen", "127.0.0.1:99999", "--state", "none"],
            ["--listen", "example.invalid:7878", "--state", "none"],
            safe + ["--help=yes"],
        ]
        for arguments in cases {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertEqual(nonEmptyLines(result.stderr).count, 1, "\(arguments) hint: \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
            XCTAssertFalse(result.stderr.contains("listening on"), "\(arguments)")
        }
    }

    func test_listen_localhost_servesOnIPv4Loopback() throws {
        let daemon = try DaemonProcess(arguments: ["--listen", "localhost:0"], state: "none")
        defer { daemon.stop() }
        XCTAssertTrue(daemon.log.contains("listening on 127.0.0.1:\(daemon.port)"), daemon.log)
        XCTAssertEqual(try daemon.connect().request("PING"), "PONG")
    }

    func test_flags_gnuStyleValues_bothFormsAccepted() throws {
        let daemon = try DaemonProcess(arguments: ["--listen=127.0.0.1:0", "--max-line=64", "--log-level=warn"],
                                       state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertTrue(try client.request("PING " + String(repeating: "q", count: 60)).hasPrefix("ERR line-too-long "))
        XCTAssertEqual(try client.request("PING"), "PONG")
    }

    func test_flags_helpAndVersion_exitZero() throws {
        for flag in ["--help", "-h"] {
            let help = try run([flag])
            XCTAssertEqual(help.status, 0, flag)
            XCTAssertTrue(help.stdout.contains("--listen"), help.stdout)
            XCTAssertTrue(help.stdout.contains("--max-pending"), help.stdout)
        }
        // Help also works after other flags.
        XCTAssertEqual(try run(["--state", "none", "--help"]).status, 0)
        let version = try run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(nonEmptyLines(version.stdout).count, 1, version.stdout)
        XCTAssertTrue(version.stdout.hasPrefix("navsyncd "), version.stdout)
    }

    func test_listen_addressInUse_exit1WithOneLine() throws {
        let first = try DaemonProcess(state: "none")
        defer { first.stop() }
        let result = try run(["--listen", "127.0.0.1:\(first.port)", "--state", "none"])
        XCTAssertEqual(result.status, 1, result.stderr)
        let lines = nonEmptyLines(result.stderr)
        XCTAssertEqual(lines.count, 1, "one line, not a trace: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("127.0.0.1:\(first.port)"), result.stderr)
        XCTAssertTrue(result.stderr.lowercased().contains("in use"), result.stderr)
        // The first daemon is unaffected.
        let client = try first.connect()
        XCTAssertEqual(try client.request("PING"), "PONG")
    }

    func test_listen_secondAddressTaken_noReadinessLine_exit1() throws {
        let first = try DaemonProcess(state: "none")
        defer { first.stop() }
        let result = try run(["--listen", "127.0.0.1:0", "--listen", "127.0.0.1:\(first.port)", "--state", "none"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertFalse(result.stderr.contains("listening on"), "ready before every listener was bound: \(result.stderr)")
        XCTAssertEqual(nonEmptyLines(result.stderr).count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("127.0.0.1:\(first.port)"), result.stderr)
    }

    func test_listen_portZero_logsRealPort_andSeveralListenersWork() throws {
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--listen", "127.0.0.1:0"], state: "none")
        defer { daemon.stop() }
        let ports = daemon.listeningAddresses.compactMap(DaemonProcess.tcpPort)
        XCTAssertEqual(ports.count, 2, "\(daemon.listeningAddresses)")
        XCTAssertFalse(ports.contains(0))
        XCTAssertNotEqual(ports.first, ports.last)
        let a = try LineClient(port: ports[0])
        let b = try LineClient(port: ports[1])
        XCTAssertEqual(try a.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try b.request("SELECT green"), "OK 1")
        XCTAssertEqual(try a.readLine(), "EVENT 1 select /green", "one state behind every listener")
        a.close()
        b.close()
    }

    func test_logs_everyStderrLineHasTimestampAndLevel() throws {
        let daemon = try DaemonProcess(arguments: ["--log-level", "debug"], state: "none")
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        client.close()
        XCTAssertTrue(waitUntil { daemon.log.contains("closed") }, daemon.log)
        for line in daemon.log.split(separator: "\n") {
            XCTAssertNotNil(line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z? (debug|info|warn|error) "#,
                                       options: .regularExpression), "log line without timestamp and level: \(line)")
        }
    }
}
