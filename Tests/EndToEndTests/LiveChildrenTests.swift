@testable import ChildProcessHarness
import Foundation
import Glibc
import XCTest

/// The children an interrupted run kills before it dies: listed from their
/// start until a wait sees them end, killed by PID, and the interruption
/// signals handled once there is something to kill.
final class LiveChildrenTests: XCTestCase {
    func test_track_listsTheChildUntilAWaitSeesItEnd_andHandlesTheInterruptions() throws {
        let child = try startSleeper()
        defer { ChildExit.kill(child) }
        LiveChildren.track(child)
        XCTAssertTrue(LiveChildren.pids.contains(child.processIdentifier))
        // A signal the run was started with ignored (a background job of a
        // script ignores SIGINT) stays ignored; every other one is handled.
        for signal in LiveChildren.interruptions {
            XCTAssertTrue(LiveChildren.handles(signal) || LiveChildren.isIgnored(signal),
                          "signal \(signal) is neither handled here nor ignored")
        }
        XCTAssertNotNil(ChildExit.kill(child))
        XCTAssertFalse(LiveChildren.pids.contains(child.processIdentifier), "an ended child's PID is no longer ours")
    }

    func test_killAll_killsEveryListedChild_byPID() throws {
        let children = try [startSleeper(), startSleeper()]
        defer { children.forEach { ChildExit.kill($0) } }
        children.forEach(LiveChildren.track)
        // Every other test has stopped its children by now; killAll must hit these two only.
        let listed = Set(LiveChildren.pids), ours = Set(children.map(\.processIdentifier))
        guard listed == ours else { return XCTFail("listed \(listed), expected only \(ours): an earlier test's child is still running") }
        LiveChildren.killAll()
        for child in children {
            XCTAssertEqual(ChildExit.wait(child, seconds: 20), ChildExit.Ending(status: SIGKILL, bySignal: true))
        }
        XCTAssertEqual(LiveChildren.pids, [])
    }

    func test_track_unlistsAChildFoundationSawEnd_thoughNoWaitDid() throws {
        let quick = Process()
        quick.executableURL = URL(fileURLWithPath: "/bin/true")
        try quick.run()
        LiveChildren.track(quick)
        XCTAssertTrue(waitUntil { !quick.isRunning }, "/bin/true never ended")
        XCTAssertTrue(LiveChildren.pids.contains(quick.processIdentifier), "no wait saw it end yet")
        let child = try startSleeper()
        defer { ChildExit.kill(child) }
        LiveChildren.track(child)
        XCTAssertFalse(LiveChildren.pids.contains(quick.processIdentifier), "its PID may be another process's by now")
        XCTAssertTrue(LiveChildren.pids.contains(child.processIdentifier))
    }
}
