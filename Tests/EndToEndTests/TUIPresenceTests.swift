import Foundation
import XCTest

/// Presence in the full-screen client: the members panel, detaching
/// (keys move only this pane, the daemon hears AT), the status line while
/// detached, and following again.
final class TUIPresenceTests: XCTestCase {
    func test_tui_membersPanel_detach_browseAlone_follow() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let tmux = try TmuxServer(width: 161, height: 24,
                                  command: clientPaneCommand(port: daemon.port, extraArguments: "--name ada"))
        defer { tmux.kill() }
        _ = try tmux.split(command: clientPaneCommand(port: daemon.port, environment: "USER=bo"))
        tmux.waitForAll("both connected, two members") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("2 members") && $0.hasLine("Red")
        }

        // The panel: names, roles, following; this pane's own line marked.
        tmux.sendKeys(0, "w")
        tmux.waitFor(0, "the members panel") {
            $0.contains("Members (2)") && $0.contains("ada (you)") && $0.contains("bo ")
                && $0.contains("control  following")
        }
        // Detach from the panel: the panel shows it at once.
        tmux.sendKeys(0, "d")
        tmux.waitFor(0, "detached in the panel") { $0.contains("ada (you)") && $0.contains("at red") }
        tmux.waitFor(1, "the other pane sees it") { _ in
            members(address) == ["ada control at /red", "bo control following"]
        }
        tmux.sendKeys(0, "Escape")
        tmux.waitFor(0, "the status line says detached and where the room is") {
            $0.statusLine.contains("detached (room at red)") && !$0.contains("Members (")
        }

        // Keys now move only this pane; the daemon hears AT, the room stays.
        tmux.sendKeys(0, "2")
        tmux.waitFor(0, "green, on its own") { $0.hasLine("Green") }
        XCTAssertEqual(try netcat(port: daemon.port, "GET"), "STATE 0 /red\n")
        tmux.waitFor(1, "the other pane still on red") { $0.hasLine("Red") }
        XCTAssertTrue(waitUntil(timeout: 20) {
            members(address) == ["ada control at /green", "bo control following"]
        })

        // The room moves: the detached pane stays, its status line follows the room.
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT blue"), "OK 1\n")
        tmux.waitFor(1, "the following pane on blue") { $0.hasLine("Blue") }
        tmux.waitFor(0, "the detached pane still green, the room on blue") {
            $0.hasLine("Green") && $0.statusLine.contains("detached (room at blue)")
        }

        // Follow again: the room's screen, and no more "detached".
        tmux.sendKeys(0, "f")
        tmux.waitFor(0, "following: blue") { $0.hasLine("Blue") && !$0.statusLine.contains("detached") }
        XCTAssertTrue(waitUntil(timeout: 20) {
            members(address) == ["ada control following", "bo control following"]
        })
    }

    /// `navsync who`'s lines, as a set: members are listed in the order they
    /// joined, and the two panes' clients start side by side, so on a loaded
    /// machine bo's may join first.
    private func members(_ address: String) -> Set<String> {
        Set(((try? navsync(["--connect", address, "who"]).stdout) ?? "").split(separator: "\n").map(String.init))
    }
}
