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
    var room: String = Server.defaultRoom
    var watching = false
    /// What this connection may do: the anonymous role until a good
    /// `AUTH`, then its grant (replaced by a later `AUTH` or a reload).
    var grant: Grant
    /// The token of the last good `AUTH`, kept to find this connection's
    /// grant again after a reload. Never logged.
    var credential: String?
    var failedAuths = 0
    var framer: LineFramer

    /// Output queued during this loop turn, written as one batch by `flush`.
    var outbox: [Output] = []
    var outboxBytes = 0
    /// What the transport still held right after this session's last flush:
    /// a queue no smaller at the next one means its socket sent nothing since.
    var queuedAfterLastFlush = 0
    /// Events were dropped for this watcher; a fresh STATE is owed once its
    /// socket has drained.
    var owesResync = false
    var readingPaused = false
    /// The room this session watches, nil when not watching; kept so the
    /// event path needs no lookup by name.
    var watchedRoom: Room?
    /// This session's index in `watchedRoom.watchers`, -1 when not watching.
    var watcherSlot = -1
    /// How many of `watchedRoom`'s events of the current turn this session
    /// has already taken into `outbox` (or skipped). Valid only while
    /// `eventTurn` equals the room's `turn`; otherwise it has taken none.
    var eventCursor = 0
    var eventTurn: UInt64 = 0
    var inDirtyList = false
    /// In `FanOut.backlogged`: the transport held unsent output after a flush.
    var inBacklogList = false
    /// Its changes with the store, and what waits for them (tickets, early
    /// outcomes, the command behind them).
    var changes = ChangePipeline()
    /// Lines wait in the framer, unrun, because this session's output passed
    /// `--max-pending`; they run once it drains (Server+HeldLines).
    var linesHeldForOutput = false
    /// Its name, where it looks, and the presence it follows.
    var presence = SessionPresence()
    /// Set when the session is ending: its outbox is sent, then it is closed.
    var endReason: CloseReason?
    var isEnded = false
    /// The server's count of sessions still in memory.
    private let liveCount: LiveCount

    struct Output {
        var bytes: [UInt8]
        /// Events may be dropped for a slow watcher; replies never are.
        var isEvent: Bool
        /// Non-zero for the `OK` of a change not yet fsynced, and for its
        /// event, if taken early: the batch (`FanOut.unsyncedBatch`) whose
        /// failed fsync turns the `OK` into `ERR internal` and drops the event.
        var unsyncedBatch: UInt64 = 0
    }

    init(id: Int, connection: Connection, grant: Grant, maxLineBytes: Int, liveCount: LiveCount) {
        self.id = id
        self.connection = connection
        self.grant = grant
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.liveCount = liveCount
        liveCount.increment()
    }

    deinit { liveCount.decrement() }

    /// Output the daemon holds for this client, in its own queue and in the
    /// transport's (kernel socket buffers not counted).
    var pendingBytes: Int { outboxBytes + connection.queuedWriteBytes }

    var isClosing: Bool { endReason != nil || isEnded }

    var label: String { "conn \(id) (\(connection.peerDescription))" }

    /// `WHOAMI`'s and presence's member id: the store's prefix (which
    /// tells the daemons of a fleet apart) and the session number, unique
    /// within this daemon's run. Set by the hub when it accepts the session.
    var memberID = ""
}
