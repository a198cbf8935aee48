import ChildProcessHarness
import Foundation
import XCTest

/// Who may connect and how: Unix socket, IPv6, `--token-file`, `--max-clients`.
final class DaemonAccessTests: XCTestCase {
    func test_unixSocket_servesTheSameRooms_andIsMode0600() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let socketPath = dir.file("navsyncd.sock")
        let daemon = try DaemonProcess(arguments: ["--unix", socketPath], state: "none")
        defer { daemon.stop() }
        XCTAssertTrue(daemon.listeningAddresses.contains("unix:\(socketPath)"), "\(daemon.listeningAddresses)")
        var info = stat()
        XCTAssertEqual(stat(socketPath, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, String(info.st_mode & 0o777, radix: 8))

        let overUnix = try LineClient(unixPath: socketPath)
        let overTCP = try daemon.connect()
        XCTAssertEqual(try overUnix.request("PING unix"), "PONG unix")
        XCTAssertEqual(try overTCP.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try overUnix.request("PUSH blue via unix"), "OK 1")
        XCTAssertEqual(try overTCP.readLine(), "EVENT 1 push /red/blue:via%20unix")
        overUnix.send("GET\n")
        overUnix.shutdownWrite()
        XCTAssertEqual(try overUnix.readUntilClosed(), ["STATE 1 /red/blue:via%20unix"])
        overTCP.close()
    }

    func test_unixSocket_staleFileReplaced_liveOneRefused_otherFilesUntouched() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let socketPath = dir.file("s.sock")
        let crashed = try DaemonProcess(arguments: ["--unix", socketPath], state: "none")
        kill(crashed.pid, SIGKILL)
        XCTAssertNotNil(crashed.waitForExit(5))
        XCTAssertTrue(FileManager.default.fileExists(atPath: socketPath), "kill -9 leaves the socket file")

        let daemon = try DaemonProcess(arguments: ["--unix", socketPath], state: "none")
        defer { daemon.stop() }
        let client = try LineClient(unixPath: socketPath)
        XCTAssertEqual(try client.request("PING"), "PONG")

        let second = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--unix", socketPath, "--state", "none"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains(socketPath), second.stderr)
        XCTAssertEqual(try client.request("PING again"), "PONG again", "the live daemon keeps its socket")

        let plainFile = try dir.write("not-a-socket", "precious\n")
        let third = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--unix", plainFile, "--state", "none"])
        XCTAssertEqual(third.status, 1, third.stderr)
        XCTAssertTrue(third.stderr.contains("\(plainFile) exists and is not a socket"), third.stderr)
        XCTAssertEqual(try String(contentsOfFile: plainFile, encoding: .utf8), "precious\n")
        client.close()

        XCTAssertEqual(daemon.signal(SIGTERM), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "a clean stop removes the socket file")
    }

    func test_ipv6Loopback_listensAndLogsBracketedAddress() throws {
        try XCTSkipUnless(Self.ipv6LoopbackWorks(), "no IPv6 loopback here")
        let daemon = try DaemonProcess(arguments: ["--listen", "[::1]:0"], state: "none")
        defer { daemon.stop() }
        let address = try XCTUnwrap(daemon.listeningAddresses.first)
        XCTAssertNotNil(address.range(of: #"^\[::1\]:[1-9]\d*$"#, options: .regularExpression), address)
        XCTAssertTrue(daemon.log.contains("listening on \(address)"))
        let client = try LineClient(port: daemon.port, host: "::1")
        XCTAssertEqual(try client.request("GET"), "STATE 0 /red")
        XCTAssertThrowsError(try LineClient(port: daemon.port), "IPv4 loopback was not asked for")
        client.close()
    }

    /// Whether a socket can be bound to [::1] on this machine.
    static func ipv6LoopbackWorks() -> Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }

    func test_tokenFile_authFlow_andThirdWrongTokenCloses() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let tokenFile = try dir.write("token", "s3cret token\nsecond line is ignored\n")
        // Debug logging writes every line: the token must still not reach the log.
        let daemon = try DaemonProcess(arguments: ["--token-file", tokenFile, "--log-level", "debug"], state: "none")
        defer { daemon.stop() }

        let c = try daemon.connect()
        XCTAssertTrue(try c.request("GET").hasPrefix("ERR auth-required "))
        XCTAssertTrue(try c.request("JOIN other").hasPrefix("ERR auth-required "))
        // Parse errors would map the catalog: before AUTH they are auth-required too.
        for line in ["SELECT nosuch", "PUSH red x", "IF 3 SELECT nosuch", "FROB", "JOIN bad room"] {
            XCTAssertEqual(try c.request(line), "ERR auth-required AUTH <token> first", line)
        }
        XCTAssertEqual(try c.request("PING"), "PONG")
        XCTAssertTrue(try c.request("HELLO 1").hasPrefix("HELLO navsync 1 "))
        XCTAssertTrue(try c.request("AUTH nope").hasPrefix("ERR auth-failed "))
        XCTAssertTrue(try c.request("AUTH second line is ignored").hasPrefix("ERR auth-failed "))
        XCTAssertEqual(try c.request("AUTH s3cret token"), "OK 0")
        XCTAssertEqual(try c.request("SELECT green"), "OK 1")
        XCTAssertEqual(try c.request("WATCH"), "STATE 1 /green")

        let three = try daemon.connect()
        three.send("AUTH a\nAUTH b\nAUTH c\nPING never answered\n")
        let lines = try three.readUntilClosed()
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("ERR auth-failed ") }, "\(lines)")

        let quitter = try daemon.connect()
        XCTAssertEqual(try quitter.request("QUIT"), "BYE", "QUIT works before AUTH")
        XCTAssertEqual(try quitter.readUntilClosed(), [])
        XCTAssertEqual(try c.request("GET"), "STATE 1 /green")
        c.close()
        XCTAssertTrue(waitUntil { daemon.log.contains("< AUTH <redacted>") }, daemon.log)
        XCTAssertFalse(daemon.log.contains("s3cret"), daemon.log)
        XCTAssertFalse(daemon.log.contains("second line is ignored"), daemon.log)
    }

    func test_tokenFile_missingOrEmpty_refusesToStart() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let empty = try dir.write("empty", "\n")
        for path in [dir.file("absent"), empty] {
            let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--state", "none", "--token-file", path])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(path), result.stderr)
        }
    }

    func test_maxClients_thirdConnectionGetsBusyThenEOF_slotFreesOnClose() throws {
        let daemon = try DaemonProcess(arguments: ["--max-clients", "2"], state: "none")
        defer { daemon.stop() }
        let first = try daemon.connect()
        let second = try daemon.connect()
        XCTAssertEqual(try first.request("PING 1"), "PONG 1")
        XCTAssertEqual(try second.request("PING 2"), "PONG 2")
        let third = try daemon.connect()
        let lines = try third.readUntilClosed()
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("ERR busy ") ?? false, "\(lines)")
        third.close()
        XCTAssertEqual(try first.request("PING still"), "PONG still")

        // Once one leaves, a newcomer fits (the daemon notices the close asynchronously).
        XCTAssertEqual(try second.request("QUIT"), "BYE")
        second.close()
        var reply = ""
        XCTAssertTrue(try waitUntil {
            let newcomer = try daemon.connect()
            defer { newcomer.close() }
            reply = try newcomer.request("PING new")
            return reply == "PONG new"
        }, reply)
        first.close()
    }
}
