import ChildProcessHarness
import Foundation
import XCTest

/// A private tmux server for one test: its own socket name, so it never
/// touches anyone's sessions; panes run real `navsync` processes in real
/// terminals. Always `kill()` it (a `defer` right after creating it).
final class TmuxServer {
    static let path = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    let socket = "navsync-test-" + UUID().uuidString.prefix(8)
    private let session = "t"
    private(set) var paneIDs: [String] = []

    /// Skips the test when tmux is not installed.
    static func requireTmux() throws -> String {
        guard let path else { throw XCTSkip("tmux is not installed; the terminal tests need it") }
        return path
    }

    /// Starts the server with one pane running `command` in a window of the given size.
    init(width: Int = 80, height: Int = 24, command: String) throws {
        _ = try Self.requireTmux()
        try run(["-f", "/dev/null", "-u", "new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)",
                 "-P", "-F", "#{pane_id}", command], collect: true)
        // The window keeps the size asked for, however many panes join it.
        try run(["set-option", "-g", "window-size", "manual"])
    }

    /// Adds a pane to the right running `command`, and spreads the panes evenly.
    @discardableResult
    func split(command: String) throws -> Int {
        try run(["split-window", "-h", "-t", session, "-P", "-F", "#{pane_id}", command], collect: true)
        try run(["select-layout", "-t", session, "even-horizontal"])
        return paneIDs.count - 1
    }

    func capture(_ pane: Int, escapes: Bool = false) -> String {
        (try? output(["capture-pane", "-p"] + (escapes ? ["-e"] : []) + ["-t", paneIDs[pane]])) ?? ""
    }

    func sendKeys(_ pane: Int, _ keys: String...) {
        _ = try? output(["send-keys", "-t", paneIDs[pane]] + keys)
    }

    /// Types `text` literally (no key-name lookup).
    func type(_ pane: Int, _ text: String) {
        _ = try? output(["send-keys", "-l", "-t", paneIDs[pane], text])
    }

    /// A tmux format evaluated for the pane, e.g. `#{cursor_flag}`.
    func display(_ pane: Int, _ format: String) -> String {
        ((try? output(["display-message", "-p", "-t", paneIDs[pane], format])) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func resizeWindow(width: Int, height: Int) {
        _ = try? output(["resize-window", "-t", session, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the pane (bounded) until `condition` holds for its text; returns
    /// that text, or nil after failing the test with the last capture. Each
    /// capture starts a tmux process, so polls are 50 ms apart (a tighter poll
    /// took CPU from the client under test), and the bound is 20 s because a
    /// pane under a loaded CI machine was once seen to miss 10 s.
    @discardableResult
    func waitFor(_ pane: Int, timeout: TimeInterval = 20, _ what: String, file: StaticString = #filePath,
                 line: UInt = #line, _ condition: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        repeat {
            text = capture(pane)
            if condition(text) { return text }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        XCTFail("pane \(pane): \(what) did not show within \(timeout)s; it shows:\n\(text)", file: file, line: line)
        return nil
    }

    /// Waits until every pane satisfies `condition`; returns the time it took.
    @discardableResult
    func waitForAll(timeout: TimeInterval = 20, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                    _ condition: (String) -> Bool) -> TimeInterval? {
        let start = Date()
        let deadline = start.addingTimeInterval(timeout)
        var done = Set<Int>()
        var last: [Int: String] = [:]
        repeat {
            for pane in paneIDs.indices where !done.contains(pane) {
                let text = capture(pane)
                last[pane] = text
                if condition(text) { done.insert(pane) }
            }
            if done.count == paneIDs.count { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.005)
        } while Date() < deadline
        let missing = paneIDs.indices.filter { !done.contains($0) }
        XCTFail("\(what) did not show in pane(s) \(missing) within \(timeout)s; pane \(missing[0]) shows:\n"
                + (last[missing[0]] ?? ""), file: file, line: line)
        return nil
    }

    /// Stops the server and everything running in it. Safe to call twice.
    func kill() {
        _ = try? output(["kill-server"])
    }

    deinit { kill() }

    // MARK: Running tmux

    private func run(_ arguments: [String], collect: Bool = false) throws {
        let text = try output(arguments)
        guard collect else { return }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard id.hasPrefix("%") else { throw TmuxError(description: "tmux \(arguments.first ?? "") gave '\(text)'") }
        paneIDs.append(id)
    }

    private func output(_ arguments: [String]) throws -> String {
        let result = try spawnAndWait(Self.path!, ["-L", socket] + arguments, timeout: 20)
        guard result.status == 0 else {
            throw TmuxError(description: "tmux \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdout
    }

    struct TmuxError: Error, CustomStringConvertible {
        var description: String
    }
}

/// One `navsync` client command line for a pane: UTF-8, a terminal type
/// tmux provides, colour unless `environment` says `NO_COLOR=1` (the test
/// runner itself sets NO_COLOR, which the panes would inherit), and a shell
/// that reports how the client ended and keeps the pane open for the test.
func clientPaneCommand(port: Int, extraArguments: String = "", environment: String = "") -> String {
    "sh -c 'env -u NO_COLOR LANG=C.UTF-8 TERM=screen \(environment) \(Binaries.client) --connect 127.0.0.1:\(port) \(extraArguments);"
        + " echo \"[navsync exited $?]\"; sleep 3600'"
}

extension String {
    /// The pane's lines with surrounding blanks removed, for exact comparisons.
    var trimmedLines: [String] {
        split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// True when some line, trimmed, is exactly `text` (a centred title).
    func hasLine(_ text: String) -> Bool { trimmedLines.contains(text) }

    /// The last non-empty line: the status line of a full-screen client.
    var statusLine: String { trimmedLines.last { !$0.isEmpty } ?? "" }
}

/// Runs a program to completion (bounded) with its output in temporary
/// files, through posix_spawn rather than Foundation's `Process`: the tmux
/// server forks off the first tmux command and would inherit (and hold open)
/// whatever descriptors `Process` uses to notice the exit. The child gets
/// only stdin (/dev/null), stdout and stderr; every other descriptor of the
/// test process is closed in it.
func spawnAndWait(_ path: String, _ arguments: [String], timeout: TimeInterval) throws -> RunResult {
    struct SpawnFailed: Error { var code: Int32 }
    func temporaryFile() -> (fd: Int32, path: String) {
        var template = Array((NSTemporaryDirectory() + "navsync-spawn-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        return (fd, String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    let out = temporaryFile(), err = temporaryFile()
    defer {
        close(out.fd)
        close(err.fd)
        unlink(out.path)
        unlink(err.path)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, out.fd, 1)
    posix_spawn_file_actions_adddup2(&actions, err.fd, 2)
    // Close in the child whatever the test process holds open (sockets of other
    // clients, pipes of other processes); glibc ignores a close that finds nothing.
    let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    for fd in open where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }

    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard rc == 0 else { throw SpawnFailed(code: rc) }

    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(timeout)
    while waitpid(pid, &status, WNOHANG) == 0 {
        if Date() > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            XCTFail("\(path) \(arguments) did not finish within \(timeout)s")
            break
        }
        Thread.sleep(forTimeInterval: 0.002)
    }
    func contents(_ file: String) -> String {
        (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }
    // WIFEXITED / WEXITSTATUS are macros: exit code in bits 8-15 when the low 7 bits are 0.
    let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return RunResult(status: exitStatus, stdout: contents(out.path), stderr: contents(err.path))
}
