import ChildProcessHarness
import Foundation
import Glibc
import XCTest

/// The harness's bounded waits: a child that has ended but was not reaped is
/// seen as ended, and a wait never outlives its deadline.
final class ChildExitTests: XCTestCase {
    /// While set, failures are collected here instead of failing the test:
    /// some steps below must fail the test they run in, and that is checked.
    private var capturedFailures: [String]?

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
                                expected: Bool) {
        if capturedFailures != nil {
            capturedFailures?.append(description)
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    /// Runs `body` and returns the failures it recorded, which fail nothing.
    private func failures<T>(during body: () throws -> T) rethrows -> (T, [String]) {
        capturedFailures = []
        defer { capturedFailures = nil }
        let result = try body()
        return (result, capturedFailures ?? [])
    }

    func test_isZombie_seesAnEndedChildNobodyReaped() throws {
        // Spawned past Foundation, so nothing but this test will reap it.
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for arg in argv { free(arg) } }
        XCTAssertEqual(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ), 0)
        XCTAssertTrue(waitUntil { ChildExit.isZombie(pid) }, "an ended child is a zombie until reaped")
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertFalse(ChildExit.isZombie(pid), "reaped, it is gone")
        XCTAssertFalse(ChildExit.isZombie(getpid()), "a running process is no zombie")
    }

    func test_wait_isBounded_andReportsHowTheChildEnded() throws {
        let sleeper = try startSleeper()
        XCTAssertNil(ChildExit.wait(sleeper, seconds: 0.05), "still running at the deadline")
        XCTAssertEqual(ChildExit.kill(sleeper), ChildExit.Ending(status: SIGKILL, bySignal: true))

        let failing = Process()
        failing.executableURL = URL(fileURLWithPath: "/bin/sh")
        failing.arguments = ["-c", "exit 3"]
        try failing.run()
        XCTAssertEqual(ChildExit.wait(failing, seconds: 20)?.shellStatus, 3)
    }

    func test_waitOrKill_childPastItsDeadline_isKilled_andFailsTheTest() throws {
        let sleeper = try startSleeper()
        let (ending, failed) = failures { ChildExit.waitOrKill(sleeper, seconds: 0.05, what: "the sleeper") }
        XCTAssertEqual(ending, ChildExit.Ending(status: SIGKILL, bySignal: true))
        XCTAssertEqual(failed.count, 1, "\(failed)")
        XCTAssertTrue(failed.first?.contains("the sleeper (pid \(sleeper.processIdentifier)) was still running after 0.05 s") ?? false,
                      "\(failed)")
    }

    func test_waitOrKill_childEndingInTime_failsNothing() throws {
        let quick = Process()
        quick.executableURL = URL(fileURLWithPath: "/bin/sh")
        quick.arguments = ["-c", "exit 4"]
        try quick.run()
        let (ending, failed) = failures { ChildExit.waitOrKill(quick, seconds: 20, what: "sh") }
        XCTAssertEqual(ending, ChildExit.Ending(status: 4, bySignal: false))
        XCTAssertEqual(failed, [])
    }

    func test_runProcess_pastItsTimeout_killsTheChild_andFailsTheTest() throws {
        let started = Date()
        let (result, failed) = try failures { try runProcess("/bin/sleep", ["30"], timeout: 0.1) }
        XCTAssertEqual(result.status, SIGKILL)
        XCTAssertLessThan(Date().timeIntervalSince(started), 25, "returned long before sleep 30 would have ended")
        XCTAssertEqual(failed.count, 1, "\(failed)")
        XCTAssertTrue(failed.first?.contains("/bin/sleep [\"30\"]") ?? false, "\(failed)")
    }
}
