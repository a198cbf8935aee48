import Foundation
import Glibc
import XCTest

/// The harness's bounded waits: a child that has ended but was not reaped is
/// seen as ended, and a wait never outlives its deadline.
final class ChildExitTests: XCTestCase {
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
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.run()
        XCTAssertNil(ChildExit.wait(sleeper, seconds: 0.05), "still running at the deadline")
        XCTAssertEqual(ChildExit.kill(sleeper), ChildExit.Ending(status: SIGKILL, bySignal: true))

        let failing = Process()
        failing.executableURL = URL(fileURLWithPath: "/bin/sh")
        failing.arguments = ["-c", "exit 3"]
        try failing.run()
        XCTAssertEqual(ChildExit.wait(failing, seconds: 5)?.shellStatus, 3)
    }
}
