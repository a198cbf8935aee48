import Foundation
import Glibc
import XCTest

/// Bounded waits for a child `Process`. Foundation on Linux learns of a
/// child's end from SIGCHLD; on a loaded machine it has been seen to miss
/// one, so the child stays a zombie that `isRunning` calls running and
/// `waitUntilExit` waits on for ever — a hung test run instead of a failed
/// test. Every wait of the harnesses goes through here: it never blocks past
/// its deadline, and a child left a zombie for a second is reaped here.
public enum ChildExit {
    /// How a child ended.
    public struct Ending: Equatable, Sendable {
        /// The exit status, or the signal's number when `bySignal`.
        public var status: Int32
        public var bySignal: Bool

        public init(status: Int32, bySignal: Bool) {
            self.status = status
            self.bySignal = bySignal
        }

        /// A shell's reading: the status, or 128 + the signal.
        public var shellStatus: Int32 { bySignal ? 128 + status : status }
    }

    /// Waits up to `seconds` for `process` to end; nil if it is still running.
    public static func wait(_ process: Process, seconds: TimeInterval) -> Ending? {
        let deadline = Date().addingTimeInterval(seconds)
        var zombieSince: Date?
        while true {
            if !process.isRunning {
                LiveChildren.ended(process.processIdentifier)
                return Ending(status: process.terminationStatus, bySignal: process.terminationReason == .uncaughtSignal)
            }
            if isZombie(process.processIdentifier) {
                let since = zombieSince ?? Date()
                zombieSince = since
                // Foundation has had a second to collect it and has not.
                if Date().timeIntervalSince(since) >= 1, let ending = reap(process.processIdentifier) {
                    LiveChildren.ended(process.processIdentifier)
                    return ending
                }
            }
            if Date() >= deadline { return nil }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Kills `process` if it is still running and waits (bounded) for it.
    @discardableResult
    public static func kill(_ process: Process, seconds: TimeInterval = 5) -> Ending? {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        return wait(process, seconds: seconds)
    }

    /// Kills `process` if it is still running and waits (bounded) for it;
    /// one that outlives even SIGKILL by `seconds` fails the current test.
    @discardableResult
    public static func killOrReport(_ process: Process, seconds: TimeInterval = 5, what: @autoclosure () -> String,
                                    file: StaticString = #filePath, line: UInt = #line) -> Ending? {
        let ending = kill(process, seconds: seconds)
        if ending == nil {
            XCTFail("\(what()) (pid \(process.processIdentifier)) did not end within \(seconds) s of SIGKILL",
                    file: file, line: line)
        }
        return ending
    }

    /// Waits up to `seconds` for a child that is expected to end by itself.
    /// One still running at the deadline fails the current test, naming
    /// `what`, and is killed with SIGKILL: a stuck child costs one failed
    /// test, never a hung run. Nil only if SIGKILL did not end it either.
    @discardableResult
    public static func waitOrKill(_ process: Process, seconds: TimeInterval, what: @autoclosure () -> String,
                                  file: StaticString = #filePath, line: UInt = #line) -> Ending? {
        if let ending = wait(process, seconds: seconds) { return ending }
        XCTFail("\(what()) (pid \(process.processIdentifier)) was still running after \(seconds) s; killing it",
                file: file, line: line)
        return killOrReport(process, what: what(), file: file, line: line)
    }

    /// True when /proc says the process has ended and waits to be reaped.
    public static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // "pid (command) S ...": the state letter follows the command's ")".
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    private static func reap(_ pid: pid_t) -> Ending? {
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = raw & 0x7f
        return signal == 0 ? Ending(status: (raw >> 8) & 0xff, bySignal: false) : Ending(status: signal, bySignal: true)
    }
}
