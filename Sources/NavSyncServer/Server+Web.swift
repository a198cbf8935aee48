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
        fanOut.discard(session)
        session.endReason = reason
        finishEnding(session, graceful: true)
    }
}

/// The HTTP API's asks (HTTP-API.md): each request acts for its own
/// credential in its own room, and a change or a stream then runs as the
/// line protocol's lines on this session, through the same parser and the
/// same `WATCH`.
extension Server {
    /// The session takes this request's grant (and the token it came
    /// from, so a reload that revokes the token ends it) and its room, as
    /// `AUTH` and `JOIN` would, without a reply.
    public func act(_ session: Session, for grant: Grant, token: String?, in room: String) {
        guard !session.isClosing else { return }
        let changed = grant != session.grant
        session.access.actsFor(grant, token: token)
        if room != session.room { join(session, room) }
        if changed { grantChanged(session) }
    }

    /// The room's members in `WHO`'s order.
    public func roomMembers(_ room: String) -> [Member] { members(of: room) }

    /// The room as it was at `revision`: the current state, or the one its
    /// history's event of that revision left; nil when neither has it.
    public func roomState(_ name: String, at revision: UInt64) -> RoomState? {
        let current = state(of: name)
        if current.revision == revision { return current }
        guard revision > 0, revision < current.revision,
              let event = rooms.existing(name)?.history.events(after: revision - 1, current: current.revision)?.first,
              case .event(let found, _, let route) = ServerLine.parse(String(decoding: event.dropLast(), as: UTF8.self)),
              found == revision, case .success(let navigation) = Route.decode(route) else { return nil }
        return RoomState(navigation, revision: revision)
    }
}
