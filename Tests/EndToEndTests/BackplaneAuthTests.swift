import ChildProcessHarness
import Foundation
import Glibc
import RedisServerHarness
import XCTest

/// `--backplane-auth`: the daemon authenticates to a Redis that
/// requires it, with a password or as an ACL user, on every connection
/// (reconnects too), and never shows the secret.
final class BackplaneAuthTests: XCTestCase {
    private static let password = "redis-pass-4d8f1a"
    private static let alicePassword = "alice-pass-93be27"

    private func secretFile(_ dir: TemporaryDirectory, _ text: String) throws -> String {
        let path = try dir.write("redis-auth", text)
        chmod(path, 0o600)
        return path
    }

    func test_backplaneAuth_password_worksAndSurvivesARedisRestart() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let redis = try RedisServerProcess(arguments: ["--requirepass", Self.password])
        defer { redis.remove() }
        let auth = try secretFile(dir, Self.password + "\n")
        let daemon = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-auth", auth, "--log-level", "debug"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertEqual(try client.request("SELECT green"), "OK 1")
        // A reconnect authenticates again.
        try redis.restart()
        XCTAssertTrue(try waitUntil(timeout: 30) { try client.request("PUSH blue").hasPrefix("OK 2") }, daemon.log)
        XCTAssertEqual(try client.request("GET"), "STATE 2 /green/blue")
        XCTAssertFalse(daemon.log.contains(Self.password), daemon.log)
    }

    func test_backplaneAuth_aclUser_works() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let redis = try RedisServerProcess(arguments: ["--requirepass", Self.password,
                                                       "--user", "alice", "on", ">" + Self.alicePassword, "~*", "&*", "+@all"])
        defer { redis.remove() }
        let auth = try secretFile(dir, "  alice \t\(Self.alicePassword)  \r\nignored second line\n")
        let a = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-auth", auth])
        defer { a.stop() }
        let b = try DaemonProcess(arguments: ["--backplane", redis.url, "--backplane-auth", auth])
        defer { b.stop() }
        let watcher = try b.connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try a.connect().request("SELECT blue"), "OK 1")
        XCTAssertEqual(try watcher.readLine(timeout: 20), "EVENT 1 select /blue")
    }

    func test_backplaneAuth_refusedOrMissing_exitsOneNamingTheCause_withoutTheSecret() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let redis = try RedisServerProcess(arguments: ["--requirepass", Self.password,
                                                       "--user", "alice", "on", ">" + Self.alicePassword, "~*", "&*", "+@all"])
        defer { redis.remove() }
        let wrong = try secretFile(dir, "not-the-password-77\n")
        let wrongUser = try dir.write("wrong-user", "alice not-the-password-77\n")
        let cases: [([String], String)] = [
            ([], "NOAUTH"),
            (["--backplane-auth", wrong], "redis refused AUTH as a password: WRONGPASS"),
            (["--backplane-auth", wrongUser], "redis refused AUTH as ACL user alice: WRONGPASS"),
            (["--backplane-auth", dir.file("absent")], "backplane auth file \(dir.file("absent")): no such file"),
        ]
        for (extra, cause) in cases {
            let result = try runProcess(Binaries.daemon, ["--listen", "127.0.0.1:0", "--backplane", redis.url] + extra, timeout: 15)
            XCTAssertEqual(result.status, 1, "\(extra): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(cause), "\(extra): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("not-the-password"), result.stderr)
            XCTAssertFalse(result.stderr.contains("listening on"), result.stderr)
        }
    }

    func test_backplaneAuth_withoutBackplane_isAUsageError() throws {
        let result = try runProcess(Binaries.daemon, ["--backplane-auth", "/nonexistent", "--state", "none"])
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertTrue(result.stderr.contains("--backplane-auth needs --backplane"), result.stderr)
    }
}
