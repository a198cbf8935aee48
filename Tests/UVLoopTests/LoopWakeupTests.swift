import Foundation
import UVLoop
import XCTest

final class LoopWakeupTests: LoopTestCase {
    /// Items other threads hand to the loop, the way a library posts commands to its loop thread.
    final class Inbox: Sendable {
        let items = Guarded<[Int]>([])
    }

    func test_wake_fromOtherThreads_runsBodyOnLoopThreadAndLosesNothing() {
        let inbox = Inbox()
        var received: [Int] = []
        var bodyThreads = Set<String>()
        let loopThread = "\(Thread.current)"
        let wakeup = LoopWakeup(loop: loop) {
            bodyThreads.insert("\(Thread.current)")
            received += inbox.items.withLock { items in
                defer { items.removeAll() }
                return items
            }
        }
        let perThread = 500
        for t in 0..<4 {
            Thread {
                for i in 0..<perThread {
                    inbox.items.withLock { $0.append(t * perThread + i) }
                    wakeup.wake()
                }
            }.start()
        }
        spin("every posted item") { received.count == 4 * perThread }
        XCTAssertEqual(Set(received), Set(0..<(4 * perThread)))
        XCTAssertEqual(bodyThreads, [loopThread])
        wakeup.close()
    }

    func test_wake_afterClose_doesNothing() {
        var calls = 0
        let wakeup = LoopWakeup(loop: loop) { calls += 1 }
        wakeup.wake()
        spin("the first wake-up") { calls == 1 }
        wakeup.close()
        wakeup.close()
        wakeup.wake()
        idle(milliseconds: 30)
        XCTAssertEqual(calls, 1)
    }

    func test_open_keepsRunGoingUntilClosed() {
        var woken = false
        var wakeup: LoopWakeup?
        wakeup = LoopWakeup(loop: loop) {
            woken = true
            wakeup?.close()
        }
        let shared = wakeup!
        Thread {
            Thread.sleep(forTimeInterval: 0.05)
            shared.wake()
        }.start()
        runBounded("returns only once the body closed the handle")
        XCTAssertTrue(woken)
    }
}
