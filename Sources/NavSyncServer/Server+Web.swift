import NavSyncCore

/// What the web door's port (navsyncd's `SessionWebPort`) asks of the hub
/// beyond its public figures: the rooms `/rooms` lists, a room's state, a
/// name for the logs, and ending a session that never spoke the line
/// protocol. Nothing here runs on the line protocol's path.
extension Server {
    /// The rooms with state this grant covers, sorted by name.
    public func roomRevisions(visibleTo grant: Grant) -> [(name: String, revision: UInt64)] {
        rooms.changedRoomsByName().filter { grant.covers($0.name) }.map { ($0.name, $0.state.revision) }
    }

    /// A room's state; the name must be valid.
    public func roomState(_ name: String) -> RoomState { state(of: name) }

    /// The session as the logs name it.
    public func label(of session: Session) -> String { session.label }

    /// Why the session is ending, once it is.
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
}
