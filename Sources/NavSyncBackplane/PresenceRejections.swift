/// Presence read from Redis that was not taken (`presence_rejected`),
/// and the `warn` line that says so: at most one a second, so whoever
/// floods the channel with bad lines cannot flood the log as well. The line
/// names the first problem since the last one and how many followed it.
struct PresenceRejections {
    /// Lines, messages and members turned away since the daemon started.
    private(set) var count: UInt64 = 0
    private var lastLoggedAt: UInt64?
    private var sinceLogged: UInt64 = 0
    private var firstSinceLogged: String?

    static let logIntervalMilliseconds: UInt64 = 1_000

    /// Counts `times` rejections (one by default) read from `source` at loop time `now`; returns
    /// the warning to log now, or nil while the last one is under a second old.
    mutating func note(_ problem: PresenceMessage.Problem, from source: String, now: UInt64, times: Int = 1) -> String? {
        count += UInt64(times)
        sinceLogged += UInt64(times)
        if firstSinceLogged == nil { firstSinceLogged = "\(problem) from \(source)" }
        if let last = lastLoggedAt, now &- last < Self.logIntervalMilliseconds { return nil }
        let more = sinceLogged > 1 ? " (and \(sinceLogged - 1) more rejected since the last such line)" : ""
        let line = "backplane: dropped presence read from redis: \(firstSinceLogged ?? "")\(more); "
            + "presence_rejected is \(count)"
        lastLoggedAt = now
        sinceLogged = 0
        firstSinceLogged = nil
        return line
    }
}
