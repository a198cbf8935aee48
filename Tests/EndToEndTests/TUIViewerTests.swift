import Foundation
import Glibc
import XCTest

/// The full-screen client with a `view` grant: it follows the room,
/// says it is view only, and no key changes the room. Real tmux, bounded polls.
final class TUIViewerTests: XCTestCase {
    func test_tui_viewer_followsTheRoom_andNoKeyChangesIt() throws {
        _ = try TmuxServer.requireTmux()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let token = try dir.write("screen-token", DaemonGrantsTests.screen + "\n")
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port, extraArguments: "--token-file \(token)"))
        defer { tmux.kill() }
        tmux.waitFor(0, "a connected viewer") { $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("(view only)") }

        // Every key that would steer: nothing is sent, the viewer is told why.
        for key in ["m", "p", "s", "x", "2", "b", "r", "n", "Tab", "BSpace"] {
            tmux.sendKeys(0, key)
        }
        tmux.waitFor(0, "the view-only notice") { $0.contains("view only: this client follows the room") }
        let presenter = try daemon.connect()
        XCTAssertEqual(try presenter.request("AUTH \(DaemonGrantsTests.presenter)"), "OK 0")
        XCTAssertEqual(try presenter.request("GET"), "STATE 0 /red", "a viewer's key changed the room")

        // It still follows what a presenter does.
        XCTAssertEqual(try presenter.request("PUSH blue"), "OK 1")
        tmux.waitFor(0, "the presenter's push") { $0.statusLine.contains("rev 1") && $0.hasLine("Blue") }
        XCTAssertFalse(tmux.capture(0).contains("Select a screen"), "the menu opened for a viewer")

        // The help says why.
        tmux.sendKeys(0, "?")
        tmux.waitFor(0, "the viewer's help") { $0.contains("this token holds a view grant") }
        let help = tmux.capture(0)
        for line in ["who is here", "detach: your keys move only this screen", "follow the room again"] {
            XCTAssertTrue(help.contains(line), "the viewer's help lacks '\(line)':\n\(help)")
        }
    }

    /// A room-scoped view token: the status line shows the room, its
    /// revision, the members (from presence) and `view only`, never the
    /// daemon's refusal of the client's own `STATS`; the key line offers no
    /// steering key and keeps `? keys  q quit` at 80 columns.
    func test_tui_roomScopedViewer_statusShowsMembers_notTheStatsRefusal() throws {
        _ = try TmuxServer.requireTmux()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let token = try dir.write("lobby-view", DaemonGrantsTests.deskView + "\n")
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port,
                                                              extraArguments: "--room lobby --token-file \(token)"))
        defer { tmux.kill() }
        tmux.waitFor(0, "a connected lobby viewer with its member count") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("room lobby (view only)")
                && $0.statusLine.contains("1 member")
        }
        // Two heartbeats: a STATS refusal would have reached the status line by now.
        sleep(5)
        let screen = tmux.capture(0)
        XCTAssertFalse(screen.contains("ERR"), "an error on a viewer's screen:\n\(screen)")
        XCTAssertTrue(screen.statusLine.contains("1 member"), screen)
        let lines = screen.trimmedLines
        let status = lines.lastIndex { !$0.isEmpty } ?? 0
        let keys = status > 0 ? lines[status - 1] : ""
        XCTAssertTrue(keys.contains("? keys") && keys.contains("q quit"), "key line: \(keys)")
        XCTAssertFalse(keys.contains("push") || keys.contains("pop"), "a viewer is offered steering keys: \(keys)")
    }

    /// Watching without a token where anyone may watch: the help says
    /// so, not "this token", and still lists who, detach and follow.
    func test_tui_anonymousViewer_helpSpeaksOfNoToken() throws {
        _ = try TmuxServer.requireTmux()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let daemon = try DaemonProcess(arguments: ["--tokens", grants, "--anonymous", "view"], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        tmux.waitFor(0, "a connected anonymous viewer") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("(view only)")
        }
        tmux.sendKeys(0, "?")
        tmux.waitFor(0, "the anonymous viewer's help") { $0.contains("you are watching without a token") }
        let help = tmux.capture(0)
        XCTAssertFalse(help.contains("this token"), help)
        XCTAssertTrue(help.contains("follow the room again") && help.contains("--token-file"), help)
    }

    /// A room outside the grant names that room and the rooms allowed.
    func test_tui_roomOutsideTheGrant_namesTheRoomsAllowed() throws {
        _ = try TmuxServer.requireTmux()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let token = try dir.write("desk", DaemonGrantsTests.deskControl + "\n")
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port,
                                                              extraArguments: "--room boardroom --token-file \(token)"))
        defer { tmux.kill() }
        tmux.waitFor(0, "the grant's rooms") {
            $0.contains("room boardroom is outside this token's grant") && $0.contains("it allows: hall, lobby")
                && $0.contains("--room hall")
        }
    }
}
