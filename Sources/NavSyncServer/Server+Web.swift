import NavSyncCore

/// What the HTTP front door asks of the server (`/metrics` is in
/// Server+Figures.swift): a room for `/rooms/NAME`, the token, and ending a
/// session that never spoke the line protocol. Nothing here runs on the line protocol's path.
extension Server {
    /// What an HTTP request's Bearer token (nil: none sent) comes to.
    /// On a daemon without tokens any request holds the anonymous role, a
    /// token or not, as before 1.2. A failure is counted and logged here;
    /// from a throttled address the token is not checked.
    public func credential(bearer token: String?, from session: Session) -> Credential {
        guard let token, access.hasTokens else {
            return access.anonymous.role == .none ? .missing : .granted(access.anonymous)
        }
        switch access.check(token: token, from: session.connection.peerAddress) {
        case .granted(let grant):
            return .granted(grant)
        case .guess:
            access.noteFailure("wrong Bearer token", peer: session.label)
            return .wrong
        case .refused(let why):
            access.noteFailure("\(why) on a Bearer header", peer: session.label)
            return .refused(why)
        case .throttled(let seconds):
            access.noteFailure("Bearer throttled", peer: session.label, throttled: true)
            return .throttled(retryAfterSeconds: seconds)
        }
    }

    /// `/rooms`: `{"rooms":[{"room":…,"rev":…},…]}`, the rooms with
    /// state this grant covers, sorted by name.
    public func roomListJSON(visibleTo grant: Grant) -> [UInt8] {
        let listed = rooms.changedRoomsByName().filter { grant.covers($0.name) }
        return Array(RoomDocument.list(listed.map { ($0.name, $0.state.revision) }).utf8)
    }

    /// Why the session is ending, once it is; the WebSocket front door turns
    /// it into a close code.
    public func endReason(of session: Session) -> CloseReason? { session.endReason }

    /// Ends a session whose connection closes for its own reasons (an HTTP
    /// exchange that is over): it leaves the count and is closed gracefully,
    /// with nothing queued for it.
    public func finish(_ session: Session, because reason: CloseReason) {
        guard !session.isClosing else { return }
        session.outbox.removeAll()
        session.outboxBytes = 0
        session.endReason = reason
        finishEnding(session, graceful: true)
    }

    /// The room as JSON: `{"room","rev","route","stack","sheets"}` in that
    /// order, entries bottom first, `data` absent when there is none. The
    /// name must be valid.
    public func roomJSON(_ name: String) -> [UInt8] {
        Array(RoomDocument.json(room: name, state: state(of: name)).utf8)
    }
}
