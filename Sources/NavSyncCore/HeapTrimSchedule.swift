/// When the daemon hands freed heap pages back to the kernel.
///
/// A TLS handshake holds ~60 KiB while it runs and a few KiB after; a burst
/// of them (a room of screens reconnecting) leaves the difference free
/// inside glibc's heap, spread between the connections that stayed, where
/// the heap never shrinks on its own. Neither does it after a wave of
/// disconnects. Trimming walks the heap's free lists, so it waits until
/// the burst is over: it runs once `quietMilliseconds` pass with no setup
/// or teardown, and no later than `longestDelayMilliseconds` after the
/// first one it covers, so a steady trickle is trimmed too. A handful of
/// connections is not worth a trim, and however a peer paces its
/// connections, trims come at most once per `minimumIntervalMilliseconds`
/// (a trim costs the loop ~1.3 ms at 10,000 TLS watchers).
public struct HeapTrimSchedule: Sendable {
    public let quietMilliseconds: UInt64
    public let longestDelayMilliseconds: UInt64
    public let minimumIntervalMilliseconds: UInt64
    public let minimumChanges: Int

    private var changes = 0
    private var firstChangeAt: UInt64?
    private var lastTrimAt: UInt64?

    public init(quietMilliseconds: UInt64 = 100, longestDelayMilliseconds: UInt64 = 2_000,
                minimumIntervalMilliseconds: UInt64 = 1_000, minimumChanges: Int = 16) {
        self.quietMilliseconds = quietMilliseconds
        self.longestDelayMilliseconds = longestDelayMilliseconds
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
        self.minimumChanges = minimumChanges
    }

    /// A connection was set up or torn down at `now`: the delay, from now,
    /// after which to trim (a timer re-armed with it replaces the last), or
    /// nil while too few have come since the last trim.
    public mutating func connectionChanged(at now: UInt64) -> UInt64? {
        changes += 1
        let first = firstChangeAt ?? now
        firstChangeAt = first
        guard changes >= minimumChanges else { return nil }
        var due = min(now + quietMilliseconds, first + longestDelayMilliseconds)
        if let lastTrimAt { due = max(due, lastTrimAt + minimumIntervalMilliseconds) }
        return due > now ? due - now : 0
    }

    /// The trim ran at `now`: count afresh.
    public mutating func trimmed(at now: UInt64) {
        changes = 0
        firstChangeAt = nil
        lastTrimAt = now
    }
}
