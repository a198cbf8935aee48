import NavSyncCore

/// The server's view of one client connection: where it is, what it is
/// allowed to do, and the output it has not been handed to the transport yet.
///
/// Ownership: the transport side (the daemon's link) owns its session and
/// drops it when the connection is closed; the session's strong reference to
/// its `connection` is the other half of that pair and goes with it. The
/// server holds a session only while it is open (and in the turn's dirty
/// list until the next flush).
/// Must be used on the loop thread only.
public final class Session {
    public let id: Int
    let connection: Connection
    /// Its room and whether it watches it: the server's bookkeeping.
    var room: String = Server.defaultRoom
    var watching = false
    var framer: LineFramer

    /// Its grant, credential and failed `AUTH`s (the server's `authenticate`
    /// and `reload` change them).
    var access: SessionAccess
    /// Its queued output, list memberships, paused reading and owed
    /// resync: `FanOut`'s.
    var output = SessionOutput()
    /// Where it is in its watched room's events: `FanOut`'s and the room's.
    var cursor = WatchCursor()
    /// Its changes with the store, and what waits for them (tickets, early
    /// outcomes, the command behind them).
    var changes = ChangePipeline()
    /// Lines wait in the framer, unrun, because this session's output passed
    /// `--max-pending`; they run once it drains (Server+HeldLines).
    var linesHeldForOutput = false
    /// Its name, where it looks, and the presence it follows.
    var presence = SessionPresence()
    /// Set when the session is ending: its output is sent, then it is closed.
    var endReason: CloseReason?
    var isEnded = false
    /// The server's count of sessions still in memory.
    private let liveCount: LiveCount

    init(id: Int, connection: Connection, grant: Grant, maxLineBytes: Int, liveCount: LiveCount) {
        self.id = id
        self.connection = connection
        self.access = SessionAccess(grant: grant)
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.liveCount = liveCount
        liveCount.increment()
    }

    deinit { liveCount.decrement() }

    /// Output the daemon holds for this client, in its own queue and in the
    /// transport's (kernel socket buffers not counted).
    var pendingBytes: Int { output.queuedBytes + connection.queuedWriteBytes }

    /// Its grant (see `access`).
    var grant: Grant { access.grant }

    var isClosing: Bool { endReason != nil || isEnded }

    var label: String { "conn \(id) (\(connection.peerDescription))" }

    /// `WHOAMI`'s and presence's member id: the store's prefix (which
    /// tells the daemons of a fleet apart) and the session number, unique
    /// within this daemon's run. Set by the hub when it accepts the session.
    var memberID = ""
}
