import Foundation
import XCTest

/// The full-screen client and protocol 1.1: sheets drawn over the screen
/// beneath, presented and dismissed from the keyboard, `QUIT` on `q`, and a
/// catalog reloaded under a running client. Real tmux panes, bounded polls.
final class TUISheetTests: XCTestCase {
    private func client(port: Int, environment: String = "", file: StaticString = #filePath,
                        line: UInt = #line) throws -> TmuxServer {
        let tmux = try TmuxServer(command: clientPaneCommand(port: port, environment: environment))
        tmux.waitFor(0, "a connected client", file: file, line: line) { $0.statusLine.hasSuffix("connected") }
        return tmux
    }

    func test_tui_sheetFromNetcat_isABoxOverTheScreenBeneath_andGoesOnDismiss() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try client(port: daemon.port)
        defer { tmux.kill() }

        XCTAssertEqual(try netcat(port: daemon.port, "PUSH green", "PRESENT blue a note"), "OK 1\nOK 2\n")
        guard let boxed = tmux.waitFor(0, "the sheet's box", { text in
            text.contains("┌─ sheet ") && text.trimmedLines.contains { $0.hasPrefix("│") && $0.contains("“a note”") }
        }) else { return }
        let lines = boxed.trimmedLines
        XCTAssertEqual(lines.first, "red › green", "the stack's breadcrumb stays:\n\(boxed)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("│") && $0.contains("Blue") && $0.hasSuffix("│") },
                      "the sheet's title inside the box:\n\(boxed)")
        XCTAssertTrue(boxed.hasLine("Green"), "the screen beneath shows above the box:\n\(boxed)")
        XCTAssertTrue(boxed.contains("x dismiss"), "the keys say how to close it:\n\(boxed)")
        let painted = tmux.capture(0, escapes: true)
        XCTAssertNotNil(painted.range(of: "\u{1B}\\[([0-9]+;)*42m", options: .regularExpression),
                        "the screen beneath keeps its green:\n\(painted)")
        XCTAssertNotNil(painted.range(of: "\u{1B}\\[([0-9]+;)*44m", options: .regularExpression),
                        "the box is in the sheet's blue:\n\(painted)")

        // A second sheet comes to the front; the first shows behind it.
        XCTAssertEqual(try netcat(port: daemon.port, "PRESENT red"), "OK 3\n")
        tmux.waitFor(0, "two sheets, the red one in front") { text in
            text.contains("┌─ sheet 2 of 2 ") && text.contains("┌─ Blue ")
                && text.trimmedLines.contains { $0.contains("│") && $0.contains("Everything starts here.") }
        }

        // On a small terminal the pile shrinks to the front box, which keeps its title and fits.
        tmux.resizeWindow(width: 30, height: 8)
        tmux.waitFor(0, "the front sheet at 30×8") { text in
            text.contains("┌─ sheet 2 of 2 ") && !text.contains("┌─ Blue ")
                && text.trimmedLines.contains { $0.hasPrefix("│") && $0.contains("Red") }
                && text.split(separator: "\n").allSatisfy { $0.count <= 30 }
        }
        tmux.resizeWindow(width: 80, height: 24)

        XCTAssertEqual(try netcat(port: daemon.port, "DISMISS", "DISMISS"), "OK 4\nOK 5\n")
        guard let plain = tmux.waitFor(0, "no box after DISMISS", { !$0.contains("┌") && $0.statusLine.contains("rev 5") })
        else { return }
        XCTAssertTrue(plain.hasLine("Green") && plain.hasLine("One step further."), plain)
        XCTAssertFalse(plain.contains("x dismiss"), plain)
    }

    func test_tui_menuPresentsWithData_xDismisses_andNoSheetIsShownAsAnError() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let tmux = try client(port: daemon.port, environment: "NO_COLOR=1")
        defer { tmux.kill() }

        tmux.sendKeys(0, "s")
        tmux.waitFor(0, "the present menu") { $0.contains("Present a sheet") }
        tmux.sendKeys(0, "End", "d")
        tmux.waitFor(0, "the data prompt") { $0.contains("present blue, data (optional):") }
        tmux.type(0, "on top")
        tmux.sendKeys(0, "Enter")
        guard let boxed = tmux.waitFor(0, "the presented sheet", { $0.contains("┌─ sheet ") && $0.contains("“on top”") })
        else { return }
        XCTAssertTrue(boxed.contains("[ blue ]"), "without colour the sheet names its colour:\n\(boxed)")
        XCTAssertEqual(try netcat(port: daemon.port, "GET"), "STATE 1 /red#blue:on%20top\n")

        tmux.sendKeys(0, "x")
        tmux.waitFor(0, "the sheet dismissed") { !$0.contains("┌") && $0.statusLine.contains("rev 2") }
        XCTAssertEqual(try netcat(port: daemon.port, "GET"), "STATE 2 /red\n")
        tmux.sendKeys(0, "x")
        tmux.waitFor(0, "the no-sheet refusal") { $0.statusLine.hasPrefix("ERR no-sheet") }
    }

    func test_tui_quit_saysQuit_soTheDaemonDropsTheWatcherAtOnce() throws {
        _ = try TmuxServer.requireTmux()
        let daemon = try DaemonProcess(arguments: ["--log-level", "debug"], state: "none")
        defer { daemon.stop() }
        let tmux = try client(port: daemon.port)
        defer { tmux.kill() }
        XCTAssertTrue(try netcat(port: daemon.port, "STATS").contains("STAT watchers 1\n"))

        tmux.sendKeys(0, "q")
        tmux.waitFor(0, "the client gone") { $0.contains("[navsync exited 0]") }
        // No change is made in the room: nothing but the client's own goodbye can free its slot.
        var stats = ""
        // Each poll starts a netcat: a 3 s bound was a handful of polls on a loaded machine.
        let dropped = try waitUntil(timeout: 20) {
            stats = try netcat(port: daemon.port, "STATS")
            return stats.contains("STAT watchers 0\n")
        }
        XCTAssertTrue(dropped, "still counted after q:\n\(stats)")
        XCTAssertTrue(daemon.log.contains("closed: client quit"), "the client said QUIT:\n\(daemon.log.suffix(2000))")
    }

    func test_tui_catalogMessages_show_andASighupReload_dropsAScreenFromTheMenu() throws {
        _ = try TmuxServer.requireTmux()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func catalog(_ screens: [String], saying word: String) -> String {
            let entries = screens.map { name in
                "{\"name\": \"\(name)\", \"title\": \"Screen \(name)\", \"color\": \"cyan\", \"message\": \"\(word) \(name).\"}"
            }
            return "{\"initial\": \"one\", \"screens\": [" + entries.joined(separator: ", ") + "]}"
        }
        let screens = try directory.write("screens.json", catalog(["one", "two", "three"], saying: "About"))
        let daemon = try DaemonProcess(arguments: ["--screens", screens], state: "none")
        defer { daemon.stop() }
        let tmux = try client(port: daemon.port)
        defer { tmux.kill() }
        tmux.waitFor(0, "the message of a --screens catalog") { $0.hasLine("Screen one") && $0.hasLine("About one.") }
        XCTAssertEqual(try netcat(port: daemon.port, "PRESENT two"), "OK 1\n")
        tmux.waitFor(0, "the sheet's message in its box") {
            $0.trimmedLines.contains { $0.hasPrefix("│") && $0.contains("About two.") }
        }

        tmux.sendKeys(0, "m")
        tmux.waitFor(0, "the menu with three screens") { $0.contains("Screen three") && $0.contains("Select a screen") }
        _ = try directory.write("screens.json", catalog(["one", "two"], saying: "Now"))
        kill(daemon.pid, SIGHUP)
        guard let menu = tmux.waitFor(0, "the menu without the dropped screen", {
            $0.contains("Select a screen") && $0.contains("Screen two") && !$0.contains("Screen three")
        }) else { return }
        XCTAssertFalse(menu.contains("[navsync exited"), menu)
        tmux.sendKeys(0, "Escape")
        tmux.waitFor(0, "the reloaded messages") { $0.hasLine("Now one.") && $0.contains("Now two.") }
    }
}
