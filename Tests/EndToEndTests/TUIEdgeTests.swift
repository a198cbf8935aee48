import Foundation
import XCTest

/// The full-screen client at the edges a new user meets: a daemon that wants
/// a token, tiny and narrow terminals, TERM=dumb, the menu's `d` and `q`, a
/// cancelled prompt, and a reconnect. Real tmux panes, bounded polls.
final class TUIEdgeTests: XCTestCase {
    func test_tui_tokenNeeded_saysWhatToDo_inTheMiddleOfTheScreen() throws {
        _ = try TmuxServer.requireTmux()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let token = try directory.write("token", "secret\n")
        let daemon = try DaemonProcess(arguments: ["--token-file", token], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        let screen = tmux.waitFor(0, "the token advice") { $0.contains("this daemon needs a token:") }
        XCTAssertTrue(screen?.contains("--token-file FILE") ?? false, screen ?? "")
        XCTAssertFalse(screen?.contains("waiting for room") ?? true, "no false hope: \(screen ?? "")")
    }

    func test_tui_tooSmall_noticeSaysTheSizeNeeded_andFits() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(width: 20, height: 5, command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        let screen = tmux.waitFor(0, "the too-small notice") { $0.contains("24×6") }
        for line in (screen ?? "").split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.count, 20, "a line wider than the terminal: '\(line)'")
        }
        XCTAssertTrue(screen?.contains("needs") ?? false, screen ?? "")
        XCTAssertTrue(screen?.contains("20×5") ?? false, "the size it has: \(screen ?? "")")

        tmux.resizeWindow(width: 40, height: 12)
        tmux.waitFor(0, "the status line at 40×12 with revision and link state") {
            $0.statusLine.contains("rev 0") && $0.statusLine.hasSuffix("connected")
        }
        XCTAssertEqual(try netcat(port: daemon.port, "PUSH blue a note"), "OK 1\n")
        tmux.waitFor(0, "the new revision at 40×12") { $0.statusLine.contains("rev 1") && $0.statusLine.contains("room main") }
    }

    func test_tui_termDumb_isRefusedWithAMessage() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port, environment: "TERM=dumb"))
        defer { tmux.kill() }
        let screen = tmux.waitFor(0, "the refusal") { $0.contains("[navsync exited 64]") }
        // The message wraps at the pane's edge; read it as one text.
        let text = (screen ?? "").replacingOccurrences(of: "\n", with: "")
        XCTAssertTrue(text.contains("(TERM=dumb)"), text)
        XCTAssertTrue(text.contains("navsync watch"), "an alternative is offered: \(text)")
    }

    func test_tui_menu_dOnAScreenWithoutData_saysSo_qClosesTheMenu() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        tmux.waitFor(0, "connected") { $0.statusLine.hasSuffix("connected") }
        tmux.sendKeys(0, "m", "j")  // the menu opens on red; j moves to green, which takes no data
        tmux.waitFor(0, "the menu on green") { $0.contains("▸2  Green") }
        tmux.sendKeys(0, "d")
        tmux.waitFor(0, "the no-data notice") { $0.contains("Green takes no data") && $0.contains("Select a screen") }
        XCTAssertEqual(try netcat(port: daemon.port, "GET"), "STATE 0 /red\n", "d sent nothing")
        // Blue takes data: d opens its prompt, and green's hint goes with the frame that opens it.
        tmux.sendKeys(0, "j", "d")
        let prompt = tmux.waitFor(0, "blue's data prompt") { $0.contains("blue, data (optional):") }
        XCTAssertFalse(prompt?.contains("Green takes no data") ?? true, "an old hint under the new prompt:\n\(prompt ?? "")")
        tmux.sendKeys(0, "Escape")
        tmux.waitFor(0, "the prompt closed") { !$0.contains("data (optional)") }
        tmux.sendKeys(0, "m")
        tmux.waitFor(0, "the menu again") { $0.contains("Select a screen") }
        tmux.sendKeys(0, "q")
        tmux.waitFor(0, "the menu closed by q, the client still running") {
            !$0.contains("Select a screen") && $0.hasLine("Red") && !$0.contains("[navsync exited")
        }
    }

    func test_tui_escOnAPrompt_clearsItsReminderAtOnce() throws {
        _ = try TmuxServer.requireTmux()
        let screens = Binaries.packageRoot + "/Clients/netcat/abc-screens.json"
        let daemon = try DaemonProcess(arguments: ["--screens", screens], state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        tmux.waitFor(0, "connected") { $0.statusLine.hasSuffix("connected") }
        tmux.sendKeys(0, "2")  // viewB requires data: the prompt opens
        tmux.waitFor(0, "the data prompt") { $0.contains("select viewB, data (required):") }
        tmux.sendKeys(0, "Enter")
        tmux.waitFor(0, "the reminder") { $0.contains("viewB needs data") }
        tmux.sendKeys(0, "Escape")
        // The frame that closes the prompt is the one that must drop the reminder.
        let closed = tmux.waitFor(0, "the prompt closed") { !$0.contains("data (required)") }
        XCTAssertFalse(closed?.contains("needs data") ?? true, "the reminder outlived its prompt:\n\(closed ?? "")")
    }

    func test_tui_reconnecting_showsTheMemberCountAsUnknown() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port))
        defer { tmux.kill() }
        tmux.waitFor(0, "one member") { $0.statusLine.contains("1 member") }
        daemon.signal(SIGKILL)
        tmux.waitFor(0, "the count unknown while reconnecting") {
            $0.statusLine.contains("? members") && $0.statusLine.contains("retry")
        }
    }
}
