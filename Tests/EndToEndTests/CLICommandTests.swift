import Foundation
import XCTest

/// `navsync` one-shot commands against a live daemon: output and exit codes
/// exactly as COMMANDS.md lists them.
final class CLICommandTests: XCTestCase {
    func test_cli_everyOneShotCommand_printsItsResult_andExitsZero() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        func ok(_ args: String..., file: StaticString = #filePath, line: UInt = #line) throws -> String {
            let result = try navsync(at + args)
            XCTAssertEqual(result.status, 0, "navsync \(args): \(result.stderr)", file: file, line: line)
            XCTAssertEqual(result.stderr, "", file: file, line: line)
            return result.stdout
        }
        XCTAssertEqual(try ok("get"), "/red\n")
        XCTAssertEqual(try ok("select", "green"), "1\n")
        XCTAssertEqual(try ok("push", "blue", "hello", "world"), "2\n")
        XCTAssertEqual(try ok("get"), "/green/blue:hello%20world\n")
        XCTAssertEqual(try ok("pop"), "3\n")
        XCTAssertEqual(try ok("next"), "4\n")
        XCTAssertEqual(try ok("get"), "/blue\n")
        XCTAssertEqual(try ok("open", "/red/green/blue:deep%20link"), "5\n")
        XCTAssertEqual(try ok("get"), "/red/green/blue:deep%20link\n")
        XCTAssertEqual(try ok("root"), "6\n")
        XCTAssertEqual(try ok("get"), "/red\n")
        XCTAssertEqual(try ok("next"), "7\n")
        XCTAssertEqual(try ok("next", "a", "note"), "8\n", "green's next is blue, which takes data")
        XCTAssertEqual(try ok("get"), "/blue:a%20note\n")
        XCTAssertEqual(try ok("select", "red"), "9\n")
        XCTAssertEqual(try ok("select", "red"), "9\n", "a change to the same stack keeps the revision")
        XCTAssertEqual(try ok("screens"), """
            red red green none Red
            green green blue none Green
            blue blue red optional Blue

            """)
    }

    func test_cli_refusal_printsTheWholeErrLineOnStderr_nothingOnStdout_exitOne() throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]
        let cases: [([String], String)] = [
            (["select", "nosuch"], "ERR unknown-screen "),
            (["pop"], "ERR at-root "),
            (["open", "/red/bad%zz"], "ERR bad-route "),
            (["select", "red", "data", "for", "red"], "ERR bad-args "),
            (["push", "green", "x"], "ERR bad-args "),
        ]
        for (args, prefix) in cases {
            let result = try navsync(at + args)
            XCTAssertEqual(result.status, 1, "\(args)")
            XCTAssertEqual(result.stdout, "", "\(args)")
            XCTAssertTrue(result.stderr.hasPrefix(prefix), "\(args): stderr was '\(result.stderr)'")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: '\(result.stderr)'")
        }
        // The refusals changed nothing.
        XCTAssertEqual(try navsync(at + ["get"]).stdout, "/red\n")
    }

    func test_cli_unreachableDaemon_exitsOne_withOneLine() throws {
        for args in [["--connect", "127.0.0.1:\(closedPort())", "get"],
                     ["--unix", NSTemporaryDirectory() + "no-such-navsync.sock", "select", "red"]] {
            let result = try navsync(args)
            XCTAssertEqual(result.status, 1, "\(args)")
            XCTAssertEqual(result.stdout, "")
            XCTAssertTrue(result.stderr.hasPrefix("navsync: cannot connect to "), result.stderr)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
        }
    }

    func test_cli_usageErrors_exit64_withAOneLineHint() throws {
        let bad: [[String]] = [
            ["--bogus", "get"],
            ["--connect"],
            ["--connect", "nohostport", "get"],
            ["--connect", "127.0.0.1:99999", "get"],
            ["--connect", "127.0.0.1:1", "--unix", "/tmp/x", "get"],
            ["--room", "bad room", "get"],
            ["frobnicate"],
            ["select"],
            ["push"],
            ["open"],
            ["open", "/red", "/green"],
            ["pop", "now"],
            ["get", "extra"],
            ["watch", "extra"],
            ["select", "two words"],
            ["state", "now"],
            ["if"],
            ["if", "1"],
            ["if", "x", "pop"],
            ["if", "-1", "pop"],
            ["if", "1", "get"],
            ["if", "1", "frobnicate"],
            ["watch", "--count", "0"],
            ["watch", "--timeout", "soon"],
            ["watch", "--timeout", "0"],
            ["get", "--count", "1"],
            ["--room", "a", "--room", "b", "get"],
            ["--retry", "raw", "GET"],
            ["raw", "GET\nPOP"],
        ]
        for args in bad {
            let result = try navsync(args)
            XCTAssertEqual(result.status, 64, "\(args): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(args)")
            XCTAssertTrue(result.stderr.hasPrefix("navsync: "), "\(args): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "\(args): \(result.stderr)")
        }
        let badEnvironment = try navsync(["get"], environment: ["NAVSYNC_ADDR": "nowhere"])
        XCTAssertEqual(badEnvironment.status, 64)
        XCTAssertTrue(badEnvironment.stderr.contains("$NAVSYNC_ADDR"), badEnvironment.stderr)
    }

    func test_cli_noCommand_withoutATerminal_printsUsageToStderr_exit64() throws {
        let result = try navsync([])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.hasPrefix("usage: navsync"), result.stderr)
        let ui = try navsync(["ui"])
        XCTAssertEqual(ui.status, 64, "ui needs a terminal")
    }

    func test_cli_helpAndVersion_exitZero_onStdout() throws {
        let help = try navsync(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: navsync"))
        XCTAssertEqual(try navsync(["-h"]).status, 0)
        let version = try navsync(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("navsync "), version.stdout)
        // COMMANDS.md: -h/--help and --version work everywhere, the minting commands included.
        for command in ["get", "watch", "keygen", "token", "link"] {
            let asked = try navsync([command, "--version"])
            XCTAssertEqual(asked.status, 0, command + ": " + asked.stderr)
            XCTAssertEqual(asked.stdout, version.stdout, command)
            let help = try navsync([command, "-h"])
            XCTAssertEqual(help.status, 0, command + ": " + help.stderr)
            XCTAssertTrue(help.stdout.hasPrefix("usage: navsync"), command + ": " + help.stdout)
        }
    }

    func test_cli_addressFromEnvironment_unixSocket_andRooms() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socketPath = directory.file("navsync.sock")
        let daemon = try DaemonProcess(arguments: ["--unix", socketPath], state: "none")
        defer { daemon.stop() }

        XCTAssertEqual(try navsync(["select", "green"], environment: ["NAVSYNC_ADDR": "127.0.0.1:\(daemon.port)"]).stdout, "1\n")
        XCTAssertEqual(try navsync(["--unix", socketPath, "get"]).stdout, "/green\n")
        XCTAssertEqual(try navsync(["get"], environment: ["NAVSYNC_ADDR": "unix:" + socketPath]).stdout, "/green\n")
        // A flag wins over the variable.
        XCTAssertEqual(try navsync(["--connect", "127.0.0.1:\(daemon.port)", "get"],
                                   environment: ["NAVSYNC_ADDR": "127.0.0.1:\(closedPort())"]).stdout, "/green\n")
        XCTAssertEqual(try navsync(["--connect", "localhost:\(daemon.port)", "get"]).stdout, "/green\n",
                       "host names are resolved")

        let lab = ["--connect", "127.0.0.1:\(daemon.port)", "--room", "lab"]
        XCTAssertEqual(try navsync(lab + ["get"]).stdout, "/red\n", "a room of its own")
        XCTAssertEqual(try navsync(lab + ["push", "blue", "in the lab"]).stdout, "1\n")
        XCTAssertEqual(try navsync(lab + ["get"]).stdout, "/red/blue:in%20the%20lab\n")
        XCTAssertEqual(try navsync(["--unix", socketPath, "get"]).stdout, "/green\n", "main is untouched")
    }

    func test_cli_tokenFile_authenticates_andRefusalsExitOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let serverToken = try directory.write("server-token", "open sesame\n")
        let rightToken = try directory.write("right", "  open sesame  \nignored second line\n")
        let wrongToken = try directory.write("wrong", "guess\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", serverToken], state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)"]

        let ok = try navsync(at + ["--token-file", rightToken, "select", "blue", "secret"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stdout, "1\n")

        let none = try navsync(at + ["get"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.hasPrefix("ERR auth-required"), none.stderr)
        XCTAssertTrue(none.stderr.contains("\nnavsync: this daemon needs a token: --token-file FILE"),
                      "what to do comes after the daemon's line: \(none.stderr)")

        let wrong = try navsync(at + ["--token-file", wrongToken, "get"])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.stdout, "")
        XCTAssertTrue(wrong.stderr.hasPrefix("ERR auth-failed"), wrong.stderr)

        let missing = try navsync(at + ["--token-file", directory.file("absent"), "get"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("token file"), missing.stderr)
    }

    /// COMMANDS.md: a room outside the grant is named, with the rooms the
    /// grant allows and the `--room` to use, after the daemon's own line.
    func test_cli_roomOutsideTheGrant_namesItAndTheGrantsRooms_oneShotsAndWatch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let grants = try directory.write("grants", "view hall,lobby wall-token-00000000001 wall\n")
        chmod(grants, 0o600)
        let token = try directory.write("token", "wall-token-00000000001\n")
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        let at = ["--connect", "127.0.0.1:\(daemon.port)", "--token-file", token]

        let main = try navsync(at + ["get"])
        XCTAssertEqual(main.status, 1)
        XCTAssertEqual(main.stdout, "")
        XCTAssertEqual(main.stderr, "ERR forbidden room main is outside this connection's grant\n"
                       + "navsync: room main is outside this token's grant, which allows hall, lobby; try --room hall\n")
        let kitchen = try navsync(at + ["--room", "kitchen", "who"])
        XCTAssertEqual(kitchen.status, 1)
        XCTAssertTrue(kitchen.stderr.hasSuffix(
            "\nnavsync: room kitchen is outside this token's grant, which allows hall, lobby; try --room hall\n"), kitchen.stderr)
        let watch = try navsync(at + ["--room", "kitchen", "--name", "desk", "watch"])
        XCTAssertEqual(watch.status, 1)
        XCTAssertTrue(watch.stderr.contains(
            "\nnavsync: room kitchen is outside this token's grant, which allows hall, lobby; try --room hall\n"), watch.stderr)
        let push = try navsync(at + ["--room", "hall", "push", "red"])
        XCTAssertEqual(push.status, 1)
        XCTAssertEqual(push.stderr, "ERR forbidden a view grant may not change a room\n"
                       + "navsync: this token's grant does not allow that (a view grant may not change a room)\n")
        XCTAssertEqual(try navsync(at + ["--room", "lobby", "get"]).stdout, "/red\n")
    }
}
