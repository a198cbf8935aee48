import NavSyncCore

/// (1.2) Presence lines on their way out. A follower's lines of a turn are
/// taken at the flush, after every reply of that turn, so a command's reply
/// always comes before the `MEMBER`/`GONE` line it caused; they go out as the
/// room's one shared buffer when the follower owes all of them. They share
/// the connection's `--max-pending` budget with its events: a follower past
/// it has both dropped and, once its socket drains, is sent `STATE` (when it
/// watches) and then a whole listing instead.
extension FanOut {
    /// First step of a follower's flush: its owed lines join its outbox, or
    /// are skipped (closing: nothing live after its last answer; a listing
    /// owed: the listing will show them), or, past the budget, are dropped
    /// with its queued events.
    func takeOwedPresence(_ session: Session, queuedBefore: Int) {
        guard let room = session.presence.followed, let range = room.owedLines(session) else { return }
        room.markTaken(session)
        guard !session.isClosing, !session.presence.owesListing else { return }
        if session.outboxBytes + room.bytes(in: range) + queuedBefore > limits.maxPendingBytes {
            dropEvents(session, reason: "over \(limits.maxPendingBytes) bytes pending with its presence lines (--max-pending)")
            return
        }
        let chunk = room.chunk(range)
        session.outbox.append(Session.Output(bytes: chunk, isEvent: true))
        session.outboxBytes += chunk.count
    }

    /// Last step: a follower whose presence lines were dropped is sent its
    /// room's members whole, once its socket has drained and after the
    /// `STATE` resync it is owed when it watches.
    func sendOwedListing(_ session: Session, queuedBefore: Int) {
        guard session.presence.owesListing, let room = session.presence.followed,
              queuedBefore == 0, session.endReason == nil else { return }
        if session.watching && session.owesResync { return }
        session.presence.owesListing = false
        // A follower that does not watch was marked owing a resync by the drop; the listing settles it.
        if !session.watching { session.owesResync = false }
        let listing = Wire.members(room.members, unasked: true)
        session.outbox.append(Session.Output(bytes: listing, isEvent: false))
        session.outboxBytes += listing.count
    }
}
