import Foundation
import Glibc
import XCTest

/// (1.2) The full-screen client with a `view` grant: it follows the room,
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
        tmux.waitFor(0, "the view-only notice") { $0.contains("view only: this token follows the room") }
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
    }
}
