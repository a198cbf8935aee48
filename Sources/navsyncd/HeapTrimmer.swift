import CGlibcMalloc
import Glibc
import NavSyncCore
import UVLoop

/// Hands the heap pages that bursts of connection set-ups and teardowns
/// leave free back to the kernel (`malloc_trim`), on `HeapTrimSchedule`'s
/// timing, so the daemon's resident memory follows the connections it holds
/// instead of the most it ever held.
/// Must be used on the loop thread only.
final class HeapTrimmer {
    private let loop: EventLoop
    private var schedule = HeapTrimSchedule()
    private lazy var timer = LoopTimer(loop: loop)
    private(set) var trims: UInt64 = 0
    private(set) var trimMicroseconds: UInt64 = 0

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// A connection finished its handshake, failed it, or closed.
    func connectionChanged() {
        guard let delay = schedule.connectionChanged(at: loop.nowMilliseconds) else { return }
        timer.start(afterMilliseconds: delay) { [unowned self] in self.trim() }
    }

    private func trim() {
        schedule.trimmed(at: loop.nowMilliseconds)
        var started = timespec()
        var ended = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        // 0: keep no spare pad at the top of the heap; the return value
        // (whether anything went back) is not worth a branch.
        _ = malloc_trim(0)
        clock_gettime(CLOCK_MONOTONIC, &ended)
        trims += 1
        let nanoseconds = (ended.tv_sec - started.tv_sec) * 1_000_000_000 + (ended.tv_nsec - started.tv_nsec)
        trimMicroseconds += UInt64(max(0, nanoseconds) / 1_000)
    }
}
