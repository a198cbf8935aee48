import Glibc
import UVLoop
import XCTest

final class EventLoopTests: LoopTestCase {
    func test_beforeBlocking_runsOncePerTurn() {
        var hookRuns = 0
        var ticks = 0
        let hook = loop.beforeBlocking { hookRuns += 1 }
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) { ticks += 1 }
        for _ in 0..<5 { loop.runOnce(nowait: false) }
        XCTAssertEqual(hookRuns, 5, "one run per iteration")
        XCTAssertGreaterThanOrEqual(ticks, 3)

        hook.close()
        hook.close()
        for _ in 0..<3 { loop.runOnce(nowait: false) }
        XCTAssertEqual(hookRuns, 5, "no runs after close")
        timer.close()
    }

    func test_beforeBlocking_runsAfterCallbacksOfTheSameTurn() throws {
        // The use case: callbacks queue output, the hook flushes it once per turn.
        let (server, client) = try connectedPair()
        var pending: [[UInt8]] = []
        var flushes = 0
        let hook = loop.beforeBlocking {
            guard !pending.isEmpty else { return }
            flushes += 1
            client.write(pending)
            pending.removeAll()
        }
        defer { hook.close() }
        let inbox = Inbox(server)
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 0) {
            for line in ["a\n", "b\n", "c\n"] { pending.append(Array(line.utf8)) }
        }
        spin("batched lines") { inbox.text == "a\nb\nc\n" }
        XCTAssertEqual(flushes, 1)
    }

    func test_beforeBlocking_doesNotKeepTheLoopRunning() {
        var hookRuns = 0
        let hook = loop.beforeBlocking { hookRuns += 1 }
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 1) {}
        runBounded("the hook must not keep the loop alive")
        XCTAssertGreaterThan(hookRuns, 0)
        timer.close()
        hook.close()
    }

    func test_stop_makesRunReturn() {
        var ticks = 0
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
            ticks += 1
            if ticks == 3 { self.loop.stop() }
        }
        runBounded("stop() in the third tick")
        XCTAssertEqual(ticks, 3)
        timer.close()
    }

    /// The watchdog of the tests above: a loop kept alive is stopped, and said to be.
    func test_watchdog_stopsALoopThatWouldRunForever() {
        let keepAlive = LoopTimer(loop: loop)
        keepAlive.start(afterMilliseconds: 1, repeatMilliseconds: 1) {}
        XCTAssertFalse(runUnderWatchdog(seconds: 0.05), "a ref'd repeating timer keeps run() going")
        keepAlive.close()
        XCTAssertTrue(runUnderWatchdog(seconds: 20), "nothing left to keep it alive")
    }

    func test_nowMilliseconds_advancesWithTheLoop() {
        let start = loop.nowMilliseconds
        idle(milliseconds: 20)
        XCTAssertGreaterThanOrEqual(loop.nowMilliseconds - start, 20)
    }

    func test_shutdown_closesHandlesStillOpen() throws {
        let (server, client) = try connectedPair()
        let listener = try StreamListener.unix(loop: loop, path: temporaryPath("left-open.sock")) { $0.close() }
        server.write([[UInt8](repeating: 1, count: 4 * 1024 * 1024)])
        var callbacks = 0
        server.onEnd = { _ in callbacks += 1 }
        server.onWriteQueueDrained = { callbacks += 1 }
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 60_000) { callbacks += 1 }
        let signal = try SignalWatcher(loop: loop, signal: SIGUSR2) { callbacks += 1 }
        _ = signal
        loop.beforeBlocking { callbacks += 1 }
        let before = callbacks

        loop.shutdown()
        XCTAssertTrue(server.isClosed)
        XCTAssertTrue(client.isClosed)
        XCTAssertEqual(callbacks, before, "no user callback during shutdown")
        var info = stat()
        XCTAssertEqual(lstat(String(listener.boundAddress.dropFirst("unix:".count)), &info), -1)
        loop.shutdown()  // a second call does nothing; tearDown calls it again too
    }
}

final class LoopTimerTests: LoopTestCase {
    func test_timer_firesOnceAfterDelay() {
        var fired = 0
        let start = loop.nowMilliseconds
        var firedAt: UInt64 = 0
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 15) {
            fired += 1
            firedAt = self.loop.nowMilliseconds
        }
        spin("timer") { fired == 1 }
        XCTAssertGreaterThanOrEqual(firedAt - start, 15)
        idle(milliseconds: 30)
        XCTAssertEqual(fired, 1)
        timer.close()
    }

    func test_timer_repeatsUntilStopped() {
        var fired = 0
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 2) {
            fired += 1
            if fired == 4 { timer.stop() }
        }
        spin("four ticks") { fired == 4 }
        idle(milliseconds: 20)
        XCTAssertEqual(fired, 4)

        timer.start(afterMilliseconds: 1) { fired += 10 }
        spin("restart") { fired == 14 }
        timer.close()
    }

    func test_timer_closeInsideBody_stopsRepeating() {
        var fired = 0
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
            fired += 1
            timer.close()
        }
        spin("first tick") { fired == 1 }
        idle(milliseconds: 20)
        XCTAssertEqual(fired, 1)
        timer.start(afterMilliseconds: 1) { fired += 1 }  // ignored after close
        idle(milliseconds: 10)
        XCTAssertEqual(fired, 1)
    }

    func test_timer_unref_letsRunReturn() {
        var fired = false
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: 60_000) { fired = true }
        timer.unref()
        let start = loop.nowMilliseconds
        runBounded("an unref'd timer must not keep the loop alive")
        XCTAssertFalse(fired)
        // Far short of the timer's minute, whatever a loaded machine (or TSan) adds to the run.
        XCTAssertLessThan(loop.nowMilliseconds - start, 30_000)
        timer.close()
    }
}

final class SignalWatcherTests: LoopTestCase {
    func test_signalWatcher_receivesRaisedSignal() throws {
        var received = 0
        let watcher = try SignalWatcher(loop: loop, signal: SIGUSR1) { received += 1 }
        raise(SIGUSR1)
        spin("SIGUSR1") { received == 1 }
        watcher.close()
        watcher.close()
    }

    func test_signalWatcher_unref_letsRunReturn() throws {
        let watcher = try SignalWatcher(loop: loop, signal: SIGUSR1) {}
        watcher.unref()
        runBounded("an unref'd signal watcher must not keep the loop alive")
        watcher.close()
    }
}

final class FDPollTests: LoopTestCase {
    func test_fdPoll_reportsReadablePipeAndRestoresFlags() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let flagsBefore = fcntl(fds[0], F_GETFL)
        var readable = 0
        let poll = try FDPoll(loop: loop, fd: fds[0]) { readable += 1 }
        idle(milliseconds: 10)
        XCTAssertEqual(readable, 0, "nothing to read yet")

        XCTAssertEqual(write(fds[1], "k", 1), 1)
        spin("readable") { readable > 0 }
        poll.close()
        poll.close()
        XCTAssertEqual(fcntl(fds[0], F_GETFL), flagsBefore, "O_NONBLOCK must not be left behind")
    }

    func test_fdPoll_badDescriptor_throws() {
        XCTAssertThrowsError(try FDPoll(loop: loop, fd: -1) {})
    }
}

final class UVErrorTests: XCTestCase {
    func test_error_namesAndDescribesCode() {
        let error = UVError(code: -EADDRINUSE)
        XCTAssertEqual(error.name, "EADDRINUSE")
        XCTAssertEqual(error.description, "address already in use")
        XCTAssertTrue(error.isAddressInUse)
        XCTAssertFalse(UVError(code: -ECONNRESET).isAddressInUse)
    }

    func test_error_unknownCode_doesNotCrash() {
        XCTAssertFalse(UVError(code: -123_456).name.isEmpty)
    }

    func test_check_throwsOnlyNegative() {
        XCTAssertNoThrow(try UVError.check(0))
        XCTAssertNoThrow(try UVError.check(17))
        XCTAssertThrowsError(try UVError.check(-EPIPE)) {
            XCTAssertEqual($0 as? UVError, UVError(code: -EPIPE))
        }
    }
}
