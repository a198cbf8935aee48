/// Every tunable bound of the daemon lives here, with its unit, so the
/// defaults are documented once and the flags in `navsyncd` only override them.
public struct Limits: Sendable, Equatable {
    /// Bytes per command line, not counting the `\n` or `\r\n` that ends it.
    public var maxLineBytes: Int = 4096
    /// Bytes of output the daemon may hold for one watcher before it drops
    /// that watcher's queued events and schedules a resync.
    public var maxPendingBytes: Int = 1 << 20
    /// Bytes of output the daemon may hold for all watchers together; past
    /// it the largest queues are resynced first.
    public var maxOutputMemoryBytes: Int = 256 << 20
    /// Entries in one room's stack and sheets together.
    public var maxDepth: Int = 64
    /// Rooms that have been changed at least once.
    public var maxRooms: Int = 1024
    /// Simultaneous client connections.
    public var maxClients: Int = 10_000
    /// Changes each room keeps in memory for `WATCH <rev>`, at most.
    public var historyCount: Int = 1024
    /// Bytes of encoded events each room's history may hold; when the last
    /// `historyCount` changes take more, fewer are kept.
    public var historyBytes: Int = 1 << 20
    /// Seconds of silence before TCP keepalive probes a connection; 0 = off.
    public var keepaliveSeconds: Int = 60

    /// The smallest `--max-line` accepted: room for the longest verb plus a
    /// useful argument, so a misconfigured daemon still answers `HELP`.
    public static let smallestMaxLineBytes = 64
    /// Linux refuses a longer idle time for TCP keepalive (`TCP_KEEPIDLE`).
    public static let largestKeepaliveSeconds = 32_767
    /// Failed `AUTH` attempts after which the connection is closed.
    public static let authAttemptsBeforeClose = 3

    public init() {}
}
