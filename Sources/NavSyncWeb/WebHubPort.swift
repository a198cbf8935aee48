import NavSyncCore

/// What the web door needs from the hub, for the one session behind one
/// connection: the door's port, owned here and implemented by the daemon
/// (navsyncd's `SessionWebPort`), so that NavSyncWeb knows nothing of the
/// hub's types and its tests can put a fake hub behind it.
///
/// Lines a WebSocket carries are not here: they travel up the byte stream
/// (`ConnectionDoor.onRead`) like a TCP client's bytes. Only what HTTP
/// itself asks of the hub is.
/// Must be used on the loop thread only.
public protocol WebHubPort: AnyObject {
    /// False while the backplane is down: the daemon's view of the rooms
    /// may then be stale, and `/health`, `/rooms` and `/rooms/NAME` say 503.
    var storeIsAvailable: Bool { get }
    /// `--max-pending`: past this many queued bytes the door stops reading
    /// requests until its responses drain, the bound every connection has.
    var maxPendingOutputBytes: Int { get }
    /// Why the session is ending, once it is (nil while it runs): a
    /// WebSocket's close frame carries its code, and a connection the hub
    /// refused at accept (busy) is not served.
    var sessionEnd: WebSessionEnd? { get }
    /// What an HTTP request's Bearer token (nil: none sent) comes to for
    /// this connection's peer. A failure is counted and logged by the hub.
    func credential(bearer token: String?) -> Credential
    /// The rooms with state this grant covers, sorted by name (`/rooms`).
    func roomRevisions(visibleTo grant: Grant) -> [(name: String, revision: UInt64)]
    /// A room's state (`/rooms/NAME`); the name is valid.
    func roomState(_ name: String) -> RoomState
    /// The daemon's figures in the Prometheus text format (`/metrics`).
    func metricsText() -> String
    /// The exchange is over (a response that closes, a timeout, a WebSocket
    /// close): the hub ends the session gracefully, `why` goes to its log.
    func finish(because why: String)
    /// Output that did not come from a line (a WebSocket's pongs and close
    /// replies) was queued: the hub holds the connection to the same
    /// `--max-pending` bound as its replies.
    func outputQueuedOutsideLines()

    /// The room's members in `WHO`'s order (`/rooms/NAME/members`).
    func members(of room: String) -> [Member]
    /// The room as it was right after `revision` (a change's answer), nil
    /// when that is no longer known.
    func roomState(_ name: String, at revision: UInt64) -> RoomState?
    /// The session acts for this request's grant (from `token`, nil for
    /// the anonymous role) in `room`, as `AUTH` and `JOIN` would, without a
    /// reply. A change or an events stream then goes up the byte stream as
    /// the line protocol's own lines, and the answers come down as lines.
    func act(for grant: Grant, token: String?, in room: String)
}
