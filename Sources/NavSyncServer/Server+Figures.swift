/// The daemon's one table of figures. `STATS` shows every row (in this
/// order); `/metrics` shows the rows about the whole daemon. Adding a figure
/// is adding a row here (or in the store's or the front door's rows) and its
/// test; both lists follow.
extension Server {
    /// Every figure, as seen by `session`; with no session (`/metrics`) the
    /// rows about the asking connection's room are left out.
    public func figures(askedBy session: Session?) -> [Figure] {
        let room = session?.room
        let rows: [Figure] = [
            Figure(key: "version", help: "The daemon's version, as a label.", kind: .label("version"),
                   value: config.version, metricName: "navsync_build_info"),
            .gauge("uptime_s", uptimeSeconds, help: "Seconds since the daemon started.",
                   metricName: "navsync_uptime_seconds"),
            .gauge("connections", sessions.count, help: "Open connections of every kind (TCP, Unix, HTTP, WebSocket)."),
            .gauge("watchers", room.map { rooms.watcherCount(of: $0) } ?? 0,
                   help: "Watching connections in the asking connection's room.", scope: .askingRoom),
            .gauge("watchers_total", rooms.watchersTotal, help: "Watching connections in all rooms.",
                   metricName: "navsync_watchers"),
            .gauge("members", room.map { presence.memberCount(of: $0) } ?? 0,
                   help: "Presence members of the asking connection's room (the fleet's, with a backplane).",
                   scope: .askingRoom),
            .gauge("members_total", presence.membersTotal,
                   help: "Presence members of all rooms (the fleet's, with a backplane).", metricName: "navsync_members"),
            .gauge("rooms", rooms.changedCount, help: "Rooms that have been changed at least once."),
            .gauge("rev", room.map { state(of: $0).revision } ?? 0,
                   help: "The revision of the asking connection's room.", scope: .askingRoom),
            .counter("events_out", fanOut.eventsOut,
                     help: "EVENT lines handed to connections, less those later dropped for a slow watcher."),
            .counter("resyncs", fanOut.resyncs, help: "STATE lines sent because a watcher fell behind."),
            .counter("commands", commandsHandled, help: "Command lines answered, errors included."),
            .gauge("live_sessions", liveSessions.value, help: "Per-connection session objects still in memory."),
            .gauge("live_links", liveLinks.value, help: "Per-connection link objects still in memory."),
            // Counted now: the figure the flush keeps is an upper bound while sockets drain.
            .gauge("output_held", fanOut.countHeldOutput(),
                   help: "Bytes of output held for all connections, not yet taken by their sockets (a turn buffer shared by many once)."),
            .counter("changes", changesMade, help: "New revisions made through this daemon."),
            .counter("auth_failures", access.failures, help: "Failed AUTH lines and Authorization: Bearer headers."),
            .counter("auth_throttled", access.throttledCount, help: "Failed AUTH lines and Bearer headers from an address throttled for guessing, not checked."),
            .word("room", room ?? "", help: "The asking connection's room.", scope: .askingRoom),
            .gauge("max_clients", limits.maxClients, help: "The --max-clients limit."),
            .word("persistence", store.persistenceName, help: "Where changes are kept: journal, none or redis."),
        ]
        let all = rows + store.figures + figureSources.flatMap { $0() }
        return session == nil ? all.filter { $0.scope == .daemon } : all
    }

    /// Adds rows kept outside the hub (the HTTP front door's counts) to
    /// `STATS` and `/metrics`. Asked each time the figures are shown.
    public func addFigures(_ source: @escaping () -> [Figure]) {
        figureSources.append(source)
    }

    /// `STATS`' lines for `session`.
    func figures(for session: Session) -> [(key: String, value: String)] {
        figures(askedBy: session).statsPairs
    }

    /// Prometheus text exposition (version 0.0.4): the same table as `STATS`.
    public func metricsText() -> String {
        figures(askedBy: nil).metricsText
    }

    /// STATS `resyncs`, kept by the fan-out.
    var resyncs: UInt64 { fanOut.resyncs }

    /// The output held for all connections as of the last flush (see FanOut+OutputBudget).
    var heldOutputBytes: Int { fanOut.heldOutputBytes }
}
