import NavSyncCore

/// The connection's life as the user sees it.
public enum Link: Equatable, Sendable {
    /// `start` has not been called.
    case idle
    /// A connect attempt is in flight; `failures` attempts in a row failed before it.
    case connecting(failures: Int)
    /// Connected; the greeting commands (AUTH, JOIN, SCREENS, WATCH) are not all answered yet.
    case handshaking
    /// Connected and, when watching, in sync.
    case live
    /// Disconnected; the next attempt starts at `retryAt` (loop milliseconds).
    case waiting(retryAt: UInt64, failures: Int, reason: String)
    /// Finished for good: closed by the caller, refused by the daemon, or lost in one-shot mode.
    case stopped(reason: String)
}

/// The answer to one submitted request.
public enum Reply: Equatable, Sendable {
    case ok(revision: UInt64)
    case state(RoomState)
    /// The item lines of a listing, without the closing `END`.
    case listing([String])
    case pong(String)
    /// `WHOAMI`'s answer.
    case identity(Identity)
    case error(ServerError)
    /// The daemon answered with something this client does not understand here.
    case unexpected(String)
    /// The request cannot be written as a protocol line; nothing was sent.
    case invalid(String)
    /// No answer will come: the connection went away (or never was).
    case lost(String)
}

/// Why a snapshot of the room replaced the client's copy.
public enum SnapshotCause: Equatable, Sendable {
    /// The first `WATCH` answer on a new connection.
    case connected
    /// A fresh `STATE` after a gap, or one the daemon sent a slow watcher.
    case resync
}

/// How the watch of a reconnect picked up where the previous connection left off.
public enum ResumeOutcome: Equatable, Sendable {
    /// The daemon still held the missed changes: `CONTINUE`, then each of them as an event.
    case continued
    /// It did not (or the daemon restarted without them): a fresh snapshot replaced the old one.
    case resynced
}

/// What happened, for whoever shows it.
public enum ClientNote: Equatable, Sendable {
    case link(Link)
    case snapshot(RoomState, SnapshotCause)
    /// A reconnect's `WATCH <rev>` was answered `CONTINUE <rev>`: the
    /// snapshot held is still right, and the missed changes follow as events.
    case continued(after: UInt64)
    /// A change arrived as an `EVENT`; the state is the room after it.
    case event(RoomState, op: String)
    /// Revisions jumped from the expected one; a resync is on its way.
    case gap(expected: UInt64, received: UInt64)
    /// The catalog from `SCREENS`, with each screen's message from `MESSAGES`
    ///: on every connection, and again after the daemon said `CATALOG`.
    case catalog([CatalogEntry])
    /// `STAT` keys and values, from the heartbeat's `STATS`.
    case stats([String: String])
    /// Who this connection is, from `WHOAMI` on every connection
    /// (with `askIdentity`); nil when the daemon is older than 1.2 and has
    /// no `WHOAMI` (it then lets a connection do everything its token does).
    case identity(Identity?)
    case reply(RequestID, Reply)
    /// An `ERR` that answers none of the caller's requests (a refused greeting, `busy`).
    case serverError(ServerError)
    /// The room's members changed (a listing, an arrival, a change, a departure).
    case members([Member])
}

/// What the owner of the socket must do, in order.
public enum ClientAction: Equatable, Sendable {
    /// Start connecting; report back with `connectSucceeded` or `connectFailed`.
    case connect
    /// Write these bytes (one or more complete lines).
    case send(String)
    /// Close the connection, or abandon the connect attempt in flight.
    case disconnect
    case note(ClientNote)
}
