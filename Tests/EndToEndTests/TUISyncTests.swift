import Foundation
import XCTest

/// The full-screen client in real terminals: tmux panes running `navsync`
/// against a live daemon, read back with `capture-pane`. Every wait is a
/// bounded poll of the panes; the tmux server and the daemon are always
/// stopped.
final class TUISyncTests: XCTestCase {
    /// A window with one client pane per entry, side by side, all connected and showing `title`.
    private func clients(_ count: Int, port: Int, width: Int = 80, environment: String = "",
                         file: StaticString = #filePath, line: UInt = #line) throws -> TmuxServer {
        let tmux = try TmuxServer(width: count * width + (count - 1), height: 24,
                                  command: clientPaneCommand(port: port, environment: environment))
        for _ in 1..<count { try tmux.split(command: clientPaneCommand(port: port, environment: environment)) }
        tmux.waitForAll("a connected client", file: file, line: line) { $0.statusLine.hasSuffix("connected") }
        return tmux
    }

    func test_tui_twoPanes_followANetcatSelect_andAMenuChoiceInEither() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try clients(2, port: daemon.port)
        defer { tmux.kill() }
        tmux.waitForAll("the red screen") { $0.hasLine("Red") && $0.hasLine("red") }
        tmux.waitForAll("the status line") {
            $0.statusLine.hasPrefix("127.0.0.1:\(daemon.port) · room main · rev 0 · 2 members")
        }

        let start = Date()
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT blue"), "OK 1\n")
        let repainted = tmux.waitForAll("the blue screen after a netcat SELECT") { $0.hasLine("Blue") }
        if let repainted {
            let total = Date().timeIntervalSince(start)
            print("TUI: netcat SELECT blue -> both panes repainted in \(Int(total * 1000)) ms "
                  + "(\(Int((total - repainted) * 1000)) ms of it running nc; observed by polling capture-pane)")
        }

        // The menu in the left pane: it opens on blue; one up is green.
        tmux.sendKeys(0, "m")
        tmux.waitFor(0, "the menu") { $0.contains("Select a screen") && $0.contains("▸3  Blue") }
        tmux.sendKeys(0, "Up")
        tmux.waitFor(0, "the menu on green") { $0.contains("▸2  Green") }
        tmux.sendKeys(0, "Enter")
        tmux.waitForAll("the green screen chosen in the left pane") {
            $0.hasLine("Green") && !$0.contains("Select a screen") && $0.statusLine.contains("rev 2")
        }

        // A digit in the right pane selects directly.
        tmux.sendKeys(1, "1")
        tmux.waitForAll("the red screen chosen with 1 in the right pane") { $0.hasLine("Red") && $0.statusLine.contains("rev 3") }
    }

    func test_tui_threeClientsAndNetcat_stayInSync_throughPushPopNextDeepLinkAndRoot() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try clients(3, port: daemon.port)
        defer { tmux.kill() }

        // Push with data from the middle pane: p, the last screen, d for data, type, Enter.
        tmux.sendKeys(1, "p")
        tmux.waitFor(1, "the push menu") { $0.contains("Push a screen") }
        tmux.sendKeys(1, "k", "d")  // k wraps from red (where the menu opens) to blue
        tmux.waitFor(1, "the data prompt") { $0.contains("push blue, data (optional):") }
        tmux.type(1, "hello world")
        tmux.sendKeys(1, "Enter")
        tmux.waitForAll("blue pushed with data") {
            $0.hasLine("red › blue") && $0.hasLine("Blue") && $0.hasLine("“hello world”")
        }
        XCTAssertEqual(try netcat(port: daemon.port, "GET"), "STATE 1 /red/blue:hello%20world\n")

        // Pop from the right pane.
        tmux.sendKeys(2, "b")
        tmux.waitForAll("popped back to red") { $0.hasLine("red") && $0.hasLine("Red") && $0.statusLine.contains("rev 2") }

        // Next from the left pane: red → green.
        tmux.sendKeys(0, "n")
        tmux.waitForAll("next: green") { $0.hasLine("green") && $0.hasLine("Green") }

        // A deep link from netcat.
        XCTAssertEqual(try netcat(port: daemon.port, "OPEN /red/green/blue:deep%20link"), "OK 4\n")
        tmux.waitForAll("the deep link") {
            $0.hasLine("red › green › blue") && $0.hasLine("“deep link”") && $0.statusLine.contains("rev 4")
        }

        // Root from the middle pane.
        tmux.sendKeys(1, "r")
        tmux.waitForAll("back at the root") { $0.hasLine("red") && $0.hasLine("Red") && $0.statusLine.contains("rev 5") }

        // Select from netcat with data for a screen that takes it.
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT blue from netcat"), "OK 6\n")
        tmux.waitForAll("netcat's select") { $0.hasLine("Blue") && $0.hasLine("“from netcat”") }
    }

    func test_tui_daemonKilledAndRestarted_bothPanesRecover_withoutAKeypress() throws {
        _ = try TmuxServer.requireTmux()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let statePath = directory.file("state.json")
        // Restarted on the same port below: held for the run (closedPort), so
        // no daemon of a test beside this one is given it while this one is away.
        let port = closedPort()
        var daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: statePath)
        defer { daemon.stop() }
        let tmux = try clients(2, port: port)
        defer { tmux.kill() }

        XCTAssertEqual(try netcat(port: port, "PUSH blue survives"), "OK 1\n")
        tmux.waitForAll("blue before the crash") { $0.hasLine("“survives”") }

        daemon.signal(SIGKILL)
        tmux.waitForAll("reconnecting on the status line") { $0.statusLine.contains("reconnecting…") }
        // The last known screen stays up while the daemon is away.
        XCTAssertTrue(tmux.capture(0).hasLine("“survives”"))

        daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: statePath)
        // The daemon kept revision 1, the one both clients hold: WATCH 1 is answered CONTINUE.
        tmux.waitForAll("connected again, on the screen the daemon kept, continued") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("rev 1") && $0.hasLine("“survives”")
                && $0.statusLine.contains("· continued")
        }
        // Watching again: a new change reaches both.
        XCTAssertEqual(try netcat(port: port, "SELECT green"), "OK 2\n")
        tmux.waitForAll("a change after the restart") { $0.hasLine("Green") && $0.statusLine.contains("rev 2") }

        // A daemon that kept nothing is behind the clients' revision 2: WATCH 2 gets a fresh STATE.
        daemon.signal(SIGKILL)
        daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)"], state: "none")
        tmux.waitForAll("resynced to the new daemon's state") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains("rev 0") && $0.hasLine("Red")
                && $0.statusLine.contains("· resynced")
        }
    }

    func test_tui_protocolError_showsOnTheStatusLine_forAFewSeconds_andTheUIStays() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try clients(1, port: daemon.port)
        defer { tmux.kill() }

        tmux.sendKeys(0, "b")  // pop at the root
        tmux.waitFor(0, "the at-root error") { $0.statusLine.hasPrefix("ERR at-root") }
        tmux.waitFor(0, "the status line back after the error") { $0.statusLine.hasSuffix("connected") }
        tmux.sendKeys(0, "2")
        tmux.waitFor(0, "green after the error") { $0.hasLine("Green") }
        XCTAssertFalse(tmux.capture(0).contains("[navsync exited"))
    }

    func test_tui_resize_redraws_andDoesNotCrash() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try clients(1, port: daemon.port)
        defer { tmux.kill() }

        tmux.resizeWindow(width: 50, height: 12)
        tmux.waitFor(0, "a 50x12 layout") { text in
            text.hasLine("Red") && text.statusLine.hasSuffix("connected")
                && text.split(separator: "\n").allSatisfy { $0.count <= 50 }
        }
        tmux.resizeWindow(width: 20, height: 4)
        tmux.waitFor(0, "the too-small notice") { $0.contains("24×6") }
        tmux.resizeWindow(width: 120, height: 40)
        tmux.waitFor(0, "a 120x40 layout") { text in
            text.hasLine("Red") && text.statusLine.hasSuffix("connected")
                && text.split(separator: "\n").contains { $0.count > 100 }
        }
        XCTAssertEqual(try netcat(port: daemon.port, "SELECT green"), "OK 1\n")
        tmux.waitFor(0, "a change after resizing") { $0.hasLine("Green") }
        XCTAssertFalse(tmux.capture(0).contains("[navsync exited"))
    }

    func test_tui_quit_leavesASaneTerminal() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        // The shell remembers the terminal settings, runs the client, and
        // reports whether they came back and stdin's file status flags.
        let script = "before=$(stty -g); env -u NO_COLOR LANG=C.UTF-8 TERM=screen \(Binaries.client) --connect 127.0.0.1:\(daemon.port);"
            + " status=$?; [ \"$(stty -g)\" = \"$before\" ] && same=yes || same=no;"
            + " echo \"[navsync exited $status] stty-same=$same\"; grep flags /proc/self/fdinfo/0; sleep 3600"
        let tmux = try TmuxServer(command: "sh -c '\(script)'")
        defer { tmux.kill() }
        tmux.waitFor(0, "the client") { $0.statusLine.hasSuffix("connected") }
        XCTAssertEqual(tmux.display(0, "#{alternate_on}"), "1", "the client draws on the alternate screen")

        tmux.sendKeys(0, "q")
        guard let text = tmux.waitFor(0, "the shell after quitting", { $0.contains("[navsync exited") && $0.contains("flags:") })
        else { return }
        XCTAssertTrue(text.contains("[navsync exited 0] stty-same=yes"), text)
        let flagsLine = text.trimmedLines.first { $0.hasPrefix("flags:") } ?? ""
        let flags = Int(flagsLine.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        XCTAssertNotNil(flags, flagsLine)
        XCTAssertEqual((flags ?? 0) & Int(O_NONBLOCK), 0, "stdin is blocking again: \(flagsLine)")
        XCTAssertEqual(tmux.display(0, "#{alternate_on}"), "0", "back on the normal screen")
        XCTAssertEqual(tmux.display(0, "#{cursor_flag}"), "1", "the cursor is visible")
        XCTAssertFalse(text.contains("connected"), "the UI is gone from the screen")
    }

    func test_tui_noColor_isMonochrome_andStillReadable() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try clients(1, port: daemon.port, environment: "NO_COLOR=1")
        defer { tmux.kill() }
        guard let text = tmux.waitFor(0, "the monochrome screen", { $0.hasLine("Red") && $0.hasLine("[ red ]") }) else { return }
        XCTAssertTrue(text.statusLine.contains("room main"))
        let styled = tmux.capture(0, escapes: true)
        XCTAssertNil(styled.range(of: "\u{1B}\\[([0-9]+;)*(3[0-7]|4[0-7])m", options: .regularExpression),
                     "no colour codes with NO_COLOR")
        XCTAssertNotNil(styled.range(of: "\u{1B}\\[([0-9]+;)*7m", options: .regularExpression),
                        "the status line stands out in reverse video:\n\(styled)")

        // In colour, the same screen fills the terminal with red.
        let colour = try clients(1, port: daemon.port)
        defer { colour.kill() }
        colour.waitFor(0, "the colour client") { $0.hasLine("Red") }
        let painted = colour.capture(0, escapes: true)
        XCTAssertNotNil(painted.range(of: "\u{1B}\\[([0-9]+;)*41m", options: .regularExpression),
                        "a red background:\n\(painted)")
    }
}
