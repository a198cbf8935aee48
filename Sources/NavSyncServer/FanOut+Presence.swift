import NavSyncCore

/// Presence lines on their way out. A follower's lines of a turn are taken
/// at the flush, after every reply of that turn, so a command's reply always
/// comes before the `MEMBER`/`GONE` line it caused. A follower that owes the
/// whole turn is handed the room's one shared buffer, as a watcher is handed
/// its room's events: N stalled followers hold that buffer once, charged
/// once to `--max-output-memory`, not N copies. The lines share the
/// connection's `--max-pending` budget with its events and fall under the
/// same output budget: a follower past either has both dropped and, once its
/// socket drains, is sent `STATE` (when it watches) and then a whole listing.
extension FanOut {
    /// The presence lines a follower takes in this flush.
    enum OwedPresence {
        /// The room's whole turn: the shared buffer.
        case wholeTurn(RoomPresence)
        /// Part of it (it started following in the middle of the turn).
        case part([UInt8])
    }

    /// First step of a follower's flush: decides what becomes of the lines it
    /// owes. They are skipped when it is closing (nothing live after its last
    /// answer) or owed a listing (the listing will show them), and dropped
    /// with its queued events, owing a resync, past `--max-pending` or when
    /// it is behind while the output of all connections is past
    /// `--max-output-memory` (`isBehindOverBudget`).
    func takeOwedPresence(_ session: Session, queuedBefore: Int, isBehindOverBudget: Bool) -> OwedPresence? {
        guard let room = session.presence.followed, let range = room.owedLines(session) else { return nil }
        room.markTaken(session)
        guard !session.isClosing, !session.presence.owesListing else { return nil }
        if session.output.queuedBytes + room.bytes(in: range) + queuedBefore > limits.maxPendingBytes {
            dropEvents(session, reason: "over \(limits.maxPendingBytes) bytes pending with its presence lines (--max-pending)")
            return nil
        }
        if isBehindOverBudget {
            dropEvents(session, reason: "presence lines behind while all connections hold over "
                       + "\(limits.maxOutputMemoryBytes) bytes (--max-output-memory)")
            return nil
        }
        return range.lowerBound == 0 ? .wholeTurn(room) : .part(room.chunk(range))
    }

    /// Last write of a follower's flush, after its replies and events.
    func writePresence(_ owed: OwedPresence, to session: Session) {
        switch owed {
        case .part(let bytes):
            session.connection.write([bytes])
        case .wholeTurn(let room):
            let lines = room.allTurnLines(ledger: sharedLedger)
            if session.connection.queuedWriteBytes == 0 && heldOutputBytes + lines.count > limits.maxOutputMemoryBytes {
                guard offerLinesWithoutQueuing(lines, to: session) != nil else { return }
                dropEvents(session, reason: "its socket is full while all connections hold \(heldOutputBytes) bytes, "
                           + "near --max-output-memory \(limits.maxOutputMemoryBytes)")
            } else {
                session.connection.write(shared: lines)
            }
        }
    }

    /// Last step: a follower whose presence lines were dropped is sent its
    /// room's members whole, once its socket has drained and after the
    /// `STATE` resync it is owed when it watches.
    func sendOwedListing(_ session: Session, queuedBefore: Int) {
        guard session.presence.owesListing, let room = session.presence.followed,
              queuedBefore == 0, session.endReason == nil else { return }
        if session.watching && session.output.owesResync { return }
        session.presence.owesListing = false
        // A follower that does not watch was marked owing a resync by the drop; the listing settles it.
        if !session.watching { session.output.settleResync() }
        session.output.append(Wire.members(room.members, unasked: true), isEvent: false)
    }
}
