import ChildProcessHarness
import Foundation
import Glibc
import NavSyncCore
import XCTest

/// Access by role and room against the built daemon: every verb of
/// the protocol for each kind of grant, in a room inside and outside it;
/// reloads; the flags and their refusals; what reaches the log.
final class DaemonGrantsTests: XCTestCase {
    static let presenter = "presenter-token-00000001"
    static let screen = "screen-token-000000000001"
    static let deskControl = "desk-control-token-000001"
    static let deskView = "desk-view-token-0000000001"
    static let grantsText = """
        # the presenter steers every room; the screen follows every room
        control * \(presenter) ada
        view * \(screen)
        control lobby,hall \(deskControl) desk
        view lobby \(deskView)

        """

    private func grantsDaemon(_ dir: TemporaryDirectory, extra: [String] = []) throws -> (DaemonProcess, String) {
        let path = try dir.write("grants", Self.grantsText)
        chmod(path, 0o600)
        return (try DaemonProcess(arguments: ["--tokens", path] + extra, state: "none"), path)
    }

    // MARK: - The table: every verb × role × room

    /// What the contract says a verb needs. Written out here, not read from
    /// the daemon's table, so the two are checked against each other.
    private enum Needs { case nothing, anyRole, roleInRoom, controlInRoom, roleForTarget, roleForEveryRoom }

    private struct Rule {
        var needs: Needs
        /// A well-formed line; `ROOM` is replaced by the room the case is about.
        var line: String
        /// The answer is several lines ending in `END`.
        var multiLine = false
    }

    /// Exhaustive: a verb added to the protocol without a rule here does not compile.
    private func rule(_ verb: Verb) -> Rule {
        switch verb {
        case .get: return Rule(needs: .roleInRoom, line: "GET")
        case .select: return Rule(needs: .controlInRoom, line: "SELECT green")
        case .push: return Rule(needs: .controlInRoom, line: "PUSH blue hi")
        case .pop: return Rule(needs: .controlInRoom, line: "POP")
        case .root: return Rule(needs: .controlInRoom, line: "ROOT")
        case .next: return Rule(needs: .controlInRoom, line: "NEXT")
        case .open: return Rule(needs: .controlInRoom, line: "OPEN /red/blue:x")
        case .present: return Rule(needs: .controlInRoom, line: "PRESENT blue")
        case .dismiss: return Rule(needs: .controlInRoom, line: "DISMISS")
        case .guarded: return Rule(needs: .controlInRoom, line: "IF 0 PUSH green")
        case .watch: return Rule(needs: .roleInRoom, line: "WATCH")
        case .unwatch: return Rule(needs: .anyRole, line: "UNWATCH")
        case .join: return Rule(needs: .roleForTarget, line: "JOIN ROOM")
        case .screens: return Rule(needs: .anyRole, line: "SCREENS", multiLine: true)
        case .messages: return Rule(needs: .anyRole, line: "MESSAGES", multiLine: true)
        case .stats: return Rule(needs: .roleForEveryRoom, line: "STATS", multiLine: true)
        case .rooms: return Rule(needs: .anyRole, line: "ROOMS", multiLine: true)
        case .ping: return Rule(needs: .nothing, line: "PING x")
        case .hello: return Rule(needs: .nothing, line: "HELLO 1")
        case .auth: return Rule(needs: .nothing, line: "AUTH not-a-grant-token-0001")
        case .quit: return Rule(needs: .nothing, line: "QUIT")
        case .help: return Rule(needs: .anyRole, line: "HELP", multiLine: true)
        case .whoami: return Rule(needs: .nothing, line: "WHOAMI")
        case .name: return Rule(needs: .anyRole, line: "NAME ada")
        // A position: `AT -` only withdraws one and is answered anywhere (its own test below).
        case .at: return Rule(needs: .roleInRoom, line: "AT /red")
        case .who: return Rule(needs: .roleInRoom, line: "WHO", multiLine: true)
        // Each case has a connection of its own, so no live presence line
        // follows the listing into the next; `PRESENCE OFF` is answered
        // anywhere (its own test below).
        case .presence: return Rule(needs: .roleInRoom, line: "PRESENCE", multiLine: true)
        }
    }

    private struct Holder {
        var label: String
        var token: String?
        var role: Role
        /// nil: every room.
        var rooms: [String]?
    }

    private let holders = [
        Holder(label: "nobody", token: nil, role: .none, rooms: nil),
        Holder(label: "control *", token: presenter, role: .control, rooms: nil),
        Holder(label: "view *", token: screen, role: .view, rooms: nil),
        Holder(label: "control lobby,hall", token: deskControl, role: .control, rooms: ["lobby", "hall"]),
        Holder(label: "view lobby", token: deskView, role: .view, rooms: ["lobby"]),
    ]

    private enum Outcome: Equatable { case answered, forbidden, authRequired }

    private func expected(_ needs: Needs, _ holder: Holder, inside: Bool) -> Outcome {
        switch needs {
        case .nothing: return .answered
        case _ where holder.role == .none: return .authRequired
        case .anyRole: return .answered
        case .roleInRoom, .roleForTarget: return inside ? .answered : .forbidden
        case .controlInRoom: return holder.role == .control && inside ? .answered : .forbidden
        case .roleForEveryRoom: return holder.rooms == nil ? .answered : .forbidden
        }
    }

    func test_everyVerb_forEachRole_inARoomInsideAndOutsideTheGrant() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir)
        defer { daemon.stop() }
        // The daemon's own list of verbs (HELP), so a verb it knows and this
        // table does not is a failure too.
        let admin = try daemon.connect()
        XCTAssertEqual(try admin.request("AUTH \(Self.presenter)"), "OK 0")
        let helpVerbs = try admin.requestList("HELP").dropFirst().dropLast().map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(Set(helpVerbs), Set(Verb.allCases.map(\.rawValue)), "HELP and the verb table differ")
        var checked = 0
        for verbName in helpVerbs {
            guard let verb = Verb(token: Substring(verbName)) else { XCTFail("unknown verb \(verbName) in HELP"); continue }
            let rule = rule(verb)
            for holder in holders {
                for inside in holder.rooms == nil ? [true] : [true, false] {
                    let client = try daemon.connect()
                    defer { client.close() }
                    if let token = holder.token {
                        let reply = try client.request("AUTH \(token)")
                        // main is outside a list grant: its revision is not told.
                        XCTAssertTrue(holder.rooms == nil ? reply.hasPrefix("OK ") : reply == "OK 0", reply)
                    }
                    // A list holder is inside once it joined its first room; outside it stays in main.
                    if inside, let first = holder.rooms?.first {
                        XCTAssertTrue(try client.request("JOIN \(first)").hasPrefix("STATE "))
                    }
                    let target = inside ? (holder.rooms?.first ?? "main") : "main"
                    let line = rule.line.replacingOccurrences(of: "ROOM", with: target)
                    let first = try client.request(line)
                    if rule.multiLine && !first.hasPrefix("ERR ") {
                        var next = first
                        while next != "END" { next = try client.readLine() }
                    }
                    let outcome: Outcome = first.hasPrefix("ERR forbidden ") ? .forbidden
                        : first.hasPrefix("ERR auth-required ") ? .authRequired : .answered
                    let place = holder.rooms == nil ? "" : (inside ? " inside" : " outside")
                    XCTAssertEqual(outcome, expected(rule.needs, holder, inside: inside),
                                   "\(line) by \(holder.label)\(place): \(first)")
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, Verb.allCases.count * 7)
    }

    func test_withdrawals_outsideTheGrant_areAnsweredWithRevisionZero() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir)
        defer { daemon.stop() }
        let presenter = try daemon.connect()
        XCTAssertEqual(try presenter.request("AUTH \(Self.presenter)"), "OK 0")
        XCTAssertEqual(try presenter.request("SELECT green"), "OK 1")
        XCTAssertEqual(try presenter.requestList("PRESENCE"), ["END"])
        // The desk starts in main, outside its grant: taking back a position
        // or a presence it never had tells nothing (revision 0, main is at 1)
        // and changes nothing the presenter, following main, would hear of.
        let desk = try daemon.connect()
        XCTAssertEqual(try desk.request("AUTH \(Self.deskControl)"), "OK 0")
        XCTAssertEqual(try desk.request("AT -"), "OK 0")
        XCTAssertEqual(try desk.request("presence off"), "OK 0")
        XCTAssertEqual(try desk.request("AT /red"), "ERR forbidden room main is outside this connection's grant")
        XCTAssertEqual(try desk.request("PRESENCE"), "ERR forbidden room main is outside this connection's grant")
        XCTAssertEqual(try desk.request("AT - extra"), "ERR forbidden room main is outside this connection's grant")
        XCTAssertTrue(presenter.staysQuiet(for: 0.5))
        XCTAssertEqual(try presenter.requestList("WHO"), ["END"])
    }

    func test_viewersMalformedMutation_isForbiddenBeforeItsParseError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir)
        defer { daemon.stop() }
        let viewer = try daemon.connect(), presenter = try daemon.connect()
        XCTAssertEqual(try viewer.request("AUTH \(Self.screen)"), "OK 0")
        XCTAssertEqual(try presenter.request("AUTH \(Self.presenter)"), "OK 0")
        for line in ["SELECT nosuch", "PUSH", "OPEN %%%", "IF x POP", "IF 1 GET", "POP extra"] {
            XCTAssertTrue(try viewer.request(line).hasPrefix("ERR forbidden "), line)
            XCTAssertFalse(try presenter.request(line).hasPrefix("ERR forbidden "), line)
        }
        // Only encoding and length come before it.
        viewer.sendBytes(Array("SELECT \u{FF}".utf8.dropLast()) + [0xFF, 0x0A])
        XCTAssertTrue(try viewer.readLine().hasPrefix("ERR bad-encoding "))
        let desk = try daemon.connect()
        XCTAssertEqual(try desk.request("AUTH \(Self.deskControl)"), "OK 0")
        XCTAssertTrue(try desk.request("JOIN bad!").hasPrefix("ERR forbidden "))
        XCTAssertTrue(try presenter.request("JOIN bad!").hasPrefix("ERR bad-args "))
    }

    func test_whoami_beforeAndAfterAuth_andASecondAuth() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir)
        defer { daemon.stop() }
        let client = try daemon.connect()
        XCTAssertTrue(try client.request("WHOAMI").hasSuffix(" anon none -"))
        XCTAssertEqual(try client.request("AUTH \(Self.deskControl)"), "OK 0")
        XCTAssertTrue(try client.request("WHOAMI").hasSuffix(" desk control hall,lobby"))
        XCTAssertTrue(try client.request("JOIN lobby").hasPrefix("STATE "))
        XCTAssertEqual(try client.request("PUSH blue"), "OK 1")
        XCTAssertEqual(try client.request("WATCH"), "STATE 1 /red/blue")
        // The second AUTH's grant covers lobby too: no unasked line.
        XCTAssertEqual(try client.request("AUTH \(Self.deskView)"), "OK 1")
        XCTAssertTrue(try client.request("WHOAMI").hasSuffix(" view view lobby"))
        XCTAssertTrue(try client.request("POP").hasPrefix("ERR forbidden "))
        // One that does not: the AUTH's reply carries 0, then the room is revoked.
        XCTAssertEqual(try client.request("JOIN main"), "ERR forbidden that room is outside this connection's grant")
        let other = try daemon.connect()
        XCTAssertEqual(try other.request("AUTH \(Self.deskControl)"), "OK 0")
        XCTAssertTrue(try other.request("JOIN hall").hasPrefix("STATE "))
        XCTAssertEqual(try other.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try other.request("AUTH \(Self.deskView)"), "OK 0")
        XCTAssertEqual(try other.readLine(), "ERR forbidden room revoked")
        XCTAssertEqual(try other.request("PING"), "PONG")
    }

    func test_anonymousView_watchesWithoutAToken_onlyTokensSteer() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir, extra: ["--anonymous", "view"])
        defer { daemon.stop() }
        let audience = try daemon.connect()
        XCTAssertTrue(try audience.request("WHOAMI").hasSuffix(" anon view *"))
        XCTAssertEqual(try audience.request("WATCH"), "STATE 0 /red")
        XCTAssertTrue(try audience.request("SELECT green").hasPrefix("ERR forbidden "))
        let presenter = try daemon.connect()
        XCTAssertEqual(try presenter.request("AUTH \(Self.presenter)"), "OK 0")
        XCTAssertEqual(try presenter.request("SELECT green"), "OK 1")
        XCTAssertEqual(try audience.readLine(), "EVENT 1 select /green")
    }

    // MARK: - Reloads

    func test_reload_revokes_changes_andABadFileKeepsTheOldGrants() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, path) = try grantsDaemon(dir)
        defer { daemon.stop() }
        let revoked = try daemon.connect(), changed = try daemon.connect(), kept = try daemon.connect()
        XCTAssertEqual(try revoked.request("AUTH \(Self.screen)"), "OK 0")
        XCTAssertEqual(try revoked.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try changed.request("AUTH \(Self.deskControl)"), "OK 0")
        XCTAssertTrue(try changed.request("JOIN hall").hasPrefix("STATE "))
        XCTAssertEqual(try changed.request("WATCH"), "STATE 0 /red")
        XCTAssertEqual(try kept.request("AUTH \(Self.presenter)"), "OK 0")

        // The screen's token is gone; the desk loses hall and steering.
        try Self.grantsText.replacingOccurrences(of: "view * \(Self.screen)\n", with: "")
            .replacingOccurrences(of: "control lobby,hall \(Self.deskControl) desk", with: "view lobby \(Self.deskControl) desk")
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(daemon.signal(SIGHUP, waitUpTo: 0), nil)
        XCTAssertEqual(try revoked.readUntilClosed(), ["ERR forbidden token revoked"])
        XCTAssertEqual(try changed.readLine(), "ERR forbidden room revoked")
        XCTAssertTrue(try changed.request("WHOAMI").hasSuffix(" desk view lobby"))
        XCTAssertTrue(try changed.request("JOIN lobby").hasPrefix("STATE "))
        XCTAssertTrue(try changed.request("SELECT green").hasPrefix("ERR forbidden "))
        XCTAssertEqual(try kept.request("SELECT green"), "OK 1")
        XCTAssertTrue(try daemon.connect().request("AUTH \(Self.screen)").hasPrefix("ERR auth-failed "))

        // A bad file: logged, the grants stay as they were.
        try "control * short\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(daemon.signal(SIGHUP, waitUpTo: 0), nil)
        XCTAssertTrue(waitUntil { daemon.log.contains("kept the old grants") }, daemon.log)
        XCTAssertTrue(daemon.log.contains("\(path):1: the token is shorter than 16 characters"), daemon.log)
        XCTAssertEqual(try daemon.connect().request("AUTH \(Self.presenter)"), "OK 1")
        XCTAssertEqual(try kept.request("PUSH blue"), "OK 2")
        XCTAssertFalse(daemon.log.contains("-token-0"), "a token reached the log")
    }

    // MARK: - Flags

    func test_flags_usageErrors_exit64() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", Self.grantsText)
        let token = try dir.write("token", "s3cret\n")
        // Never loaded: the refusal comes before any file is read.
        let (cert, key) = (try dir.write("cert.pem", "unread\n"), try dir.write("key.pem", "unread\n"))
        let cases: [([String], String)] = [
            (["--tls-listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key], "refusing to listen on 0.0.0.0:0"),
            (["--anonymous", "view"], "needs --tokens"),
            (["--anonymous", "none"], "needs --tokens"),
            (["--anonymous", "admin", "--tokens", grants], "--anonymous is none, view or control"),
            (["--tokens", grants, "--token-file", token], "do not go together"),
            (["--listen", "0.0.0.0:0"], "refusing to listen on 0.0.0.0:0"),
            (["--listen", "127.0.0.1:0", "--listen", "[::]:0"], "--anonymous control on purpose"),
        ]
        for (arguments, message) in cases {
            let result = try runProcess(Binaries.daemon, arguments + ["--state", "none"])
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    func test_flags_badGrantsFile_exit1NamingFileAndLine_withoutTheToken() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let repeated = try dir.write("repeated", "control * \(Self.presenter)\nview main \(Self.presenter)\n")
        let short = try dir.write("short", "# x\nview * abc\n")
        let malformed = try dir.write("malformed", "view\n")
        for (path, where_) in [(repeated, ":2: "), (short, ":2: "), (malformed, ":1: "), (dir.file("absent"), ": no such file")] {
            let result = try runProcess(Binaries.daemon, ["--tokens", path, "--listen", "127.0.0.1:0", "--state", "none"])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(path + where_), result.stderr)
            XCTAssertFalse(result.stderr.contains(Self.presenter), result.stderr)
        }
    }

    func test_listensBeyondLoopback_onlyWithTokensOrOnPurpose() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // Bound to every address; the test talks to loopback only.
        let (guarded, path) = try grantsDaemon(dir, extra: ["--listen", "0.0.0.0:0"])
        defer { guarded.stop() }
        XCTAssertTrue(try guarded.connect().request("GET").hasPrefix("ERR auth-required "))
        let open = try DaemonProcess(arguments: ["--listen", "0.0.0.0:0", "--anonymous", "control"], state: "none")
        defer { open.stop() }
        XCTAssertEqual(try open.connect().request("GET"), "STATE 0 /red")
        // A grants file others may read is worth a warning.
        chmod(path, 0o644)
        let exposed = try DaemonProcess(arguments: ["--tokens", path], state: "none")
        defer { exposed.stop() }
        XCTAssertTrue(waitUntil { exposed.log.contains("may be read by others") }, exposed.log)
    }

    func test_authFailures_counted_loggedWithThePeer_neverTheToken() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, _) = try grantsDaemon(dir, extra: ["--log-level", "debug"])
        defer { daemon.stop() }
        let guesser = try daemon.connect()
        XCTAssertTrue(try guesser.request("AUTH guessed-secret-00001").hasPrefix("ERR auth-failed "))
        XCTAssertTrue(try guesser.request("AUTH guessed-secret-00002").hasPrefix("ERR auth-failed "))
        let web = try daemon.connect()
        XCTAssertEqual(try web.get("/metrics", headers: [("Authorization", "Bearer guessed-secret-00003")]).status, 401)
        let admin = try daemon.connect()
        XCTAssertEqual(try admin.request("AUTH \(Self.presenter)"), "OK 0")
        let stats = try admin.requestList("STATS")
        XCTAssertTrue(stats.contains("STAT auth_failures 3"), "\(stats)")
        XCTAssertTrue(waitUntil { daemon.log.contains("auth failure: wrong token on AUTH (1 of 3) from conn") }, daemon.log)
        XCTAssertTrue(daemon.log.contains("127.0.0.1:"), daemon.log)
        XCTAssertFalse(daemon.log.contains("guessed-secret"), daemon.log)
        XCTAssertFalse(daemon.log.contains(Self.presenter), daemon.log)
    }
}
