import NavSyncCore

/// Presence in the hub: who watches each room, under which name and
/// looking where, and the `NAME`, `AT`, `WHO` and `PRESENCE` commands.
/// A member is a watching connection; its arrivals, changes and departures
/// become `MEMBER`/`GONE` lines for the room's followers (FanOut+Presence),
/// at most one per member per loop turn (`RoomPresence.settle`), and reach
/// the store as often: a member that floods `AT` costs the fleet one update
/// per turn.
/// The rooms' member lists hold members of other daemons too when the store
/// is a backplane; the hub does not tell them apart.
extension Server {
    /// The member a session shows while it watches.
    func member(of session: Session) -> Member {
        Member(id: session.memberID, name: session.presence.name ?? session.grant.name,
               role: session.grant.role, at: session.presence.at)
    }

    /// The room's members, in arrival order.
    func members(of room: String) -> [Member] { presence.existing(room)?.members ?? [] }

    // MARK: - Members come, change and go

    /// The session has become a member of its room.
    func memberArrived(_ session: Session) {
        presence.set(member(of: session), in: session.room, isLocal: true)
    }

    /// The session is no longer a member of `room`.
    func memberLeft(_ session: Session, room: String) {
        presence.remove(session.memberID, from: room, isLocal: true)
    }

    /// Its name, role or route changed: the whole line again, if it is a member.
    func memberChanged(_ session: Session) {
        guard session.watching else { return }
        memberArrived(session)
    }

    /// Before the flush: the turn's member changes become lines, marked for
    /// their followers, and the store hears of this daemon's own members.
    func settlePresence() {
        for follower in presence.settleAll() { fanOut.markDirty(follower) }
        tellStoreOfSettledMembers()
    }

    /// Settles one room before a follower's listing of it is made, so the
    /// listing shows every change so far and the lines it owes start after them.
    func settlePresence(of room: RoomPresence) {
        for follower in presence.settle(room) { fanOut.markDirty(follower) }
    }

    private func tellStoreOfSettledMembers() {
        for (room, settled) in presence.takeSettledForStore() {
            if let now = settled.now {
                store.memberChanged(now, in: room)
            } else {
                store.memberGone(settled.id, from: room)
            }
        }
    }

    /// After the flush: the turn's lines are forgotten, and changes made
    /// during it (sessions that ended) start the next turn, flushed now
    /// rather than waiting for the loop.
    func flushPresenceMadeDuringFlush() {
        while true {
            presence.endTurn()
            let reached = presence.settleAll()
            tellStoreOfSettledMembers()
            guard !reached.isEmpty else { return }
            for follower in reached { fanOut.markDirty(follower) }
            fanOut.flush()
        }
    }

    // MARK: - Commands

    func setName(_ name: String, of session: Session) {
        session.presence.name = name
        fanOut.reply(session, Wire.ok(revisionShown(to: session)))
        memberChanged(session)
    }

    func look(_ session: Session, at navigation: Navigation?) {
        session.presence.at = navigation.map(Route.encode)
        fanOut.reply(session, Wire.ok(revisionShown(to: session)))
        memberChanged(session)
    }

    /// `PRESENCE`: a fresh listing (again, if it already follows), then lines;
    /// `PRESENCE OFF`: stop.
    func followPresence(_ session: Session, _ on: Bool) {
        stopFollowingPresence(session)
        guard on else {
            fanOut.reply(session, Wire.ok(revisionShown(to: session)))
            return
        }
        let room = presence.room(named: session.room)
        settlePresence(of: room)
        room.addFollower(session)
        fanOut.reply(session, Wire.members(room.members))
    }

    func stopFollowingPresence(_ session: Session) {
        guard let room = session.presence.followed else { return }
        room.removeFollower(session)
        session.presence.owesListing = false
        presence.dropIfIdle(room)
    }

    /// Before `JOIN` moves the session to another room: it stops following
    /// the old room's presence (the lines it was owed there go first, before
    /// the `JOIN`'s reply), so it is told nothing about its own move, and it
    /// follows the room again. Returns whether it follows presence.
    func leavePresenceBeforeJoin(_ session: Session, to name: String) -> Bool {
        guard name != session.room else { return false }
        session.presence.at = nil
        guard let room = session.presence.followed else { return false }
        // What it was owed there includes the changes so far.
        settlePresence(of: room)
        let owesListing = session.presence.owesListing
        if !session.isClosing, !owesListing, let range = room.owedLines(session) {
            fanOut.reply(session, room.chunk(range))
        }
        stopFollowingPresence(session)
        return true
    }

    /// After `JOIN`'s `STATE` reply: the new room's listing, marked as unasked.
    func followPresenceAfterJoin(_ session: Session) {
        let room = presence.room(named: session.room)
        settlePresence(of: room)
        room.addFollower(session)
        fanOut.reply(session, Wire.members(room.members, unasked: true))
    }

    /// Its grant changed (`AUTH`, a reload): its member line shows the new
    /// role and name; a follower of a room the grant no longer covers stops.
    func grantChanged(_ session: Session) {
        memberChanged(session)
        if session.presence.follows && !session.grant.covers(session.room) {
            stopFollowingPresence(session)
        }
    }
}
