import ChildProcessHarness
import Foundation
import XCTest

/// `navsync who`, and the names `watch` gives itself (`--name`, `$USER`).
final class CLIPresenceTests: XCTestCase {
    func test_who_printsNameRoleAndWhereEachLooks() throws {
        let daemon = try DaemonProcess(arguments: [], state: "none")
        defer { daemon.stop() }
        let follower = try daemon.connect(), detached = try daemon.connect()
        XCTAssertEqual(try follower.request("WATCH"), "STATE 0 /red")
        detached.send("NAME bo\nWATCH\nAT /green/blue:a%20note\n")
        XCTAssertEqual(try detached.readLines(3), ["OK 0", "STATE 0 /red", "OK 0"])
        let who = try navsync(["--connect", "127.0.0.1:\(daemon.port)", "who"])
        XCTAssertEqual(who.status, 0, who.stderr)
        XCTAssertEqual(who.stdout, "anon control following\nbo control at /green/blue:a%20note\n")
        let other = try navsync(["--connect", "127.0.0.1:\(daemon.port)", "--room", "empty", "who"])
        XCTAssertEqual(other.status, 0, other.stderr)
        XCTAssertEqual(other.stdout, "")
    }

    func test_who_refused_printsTheErrLine_exitOne() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let tokens = try dir.write("token", "s3cret-token-0001\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", tokens], state: "none")
        defer { daemon.stop() }
        let who = try navsync(["--connect", "127.0.0.1:\(daemon.port)", "who"])
        XCTAssertEqual(who.status, 1)
        XCTAssertTrue(who.stderr.hasPrefix("ERR auth-required"), who.stderr)
    }

    func test_watch_namesItself_withNameElseUser() throws {
        let daemon = try DaemonProcess(arguments: [], state: "none")
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let named = try StreamingProcess(Binaries.client, ["--connect", address, "--name", "ada@desk", "watch"],
                                         environment: ["USER": "root"])
        defer { named.stop() }
        named.waitForLines(1)
        let byUser = try StreamingProcess(Binaries.client, ["--connect", address, "watch"], environment: ["USER": "cy"])
        defer { byUser.stop() }
        byUser.waitForLines(1)
        let badUser = try StreamingProcess(Binaries.client, ["--connect", address, "watch"],
                                           environment: ["USER": "not a name"])
        defer { badUser.stop() }
        badUser.waitForLines(1)
        var who = ""
        XCTAssertTrue(waitUntil(timeout: 20) {
            who = (try? navsync(["--connect", address, "who"]).stdout) ?? ""
            return who.split(separator: "\n").count == 3
        }, who)
        XCTAssertEqual(Set(who.split(separator: "\n")),
                       ["ada@desk control following", "cy control following", "anon control following"])

        let bad = try navsync(["--connect", address, "--name", "two words", "who"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--name wants"), bad.stderr)
    }
}
