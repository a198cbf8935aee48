import NavSyncCore

/// Output side of the server: per-session queues, the slow-watcher policy,
/// and the once-per-turn flush that turns a turn's output into one write per
/// connection.
extension Server {
    func reply(_ session: Session, _ bytes: [UInt8]) {
        guard !session.isEnded else { return }
        session.outbox.append(Session.Output(bytes: bytes, isEvent: false))
        session.outboxBytes += bytes.count
        markDirty(session)
    }

    /// Queues one event for a watcher. The bytes are shared with every other
    /// watcher of the room; nothing is copied here.
    func queueEvent(_ session: Session, _ bytes: [UInt8]) {
        guard !session.isClosing, !session.owesResync else { return }
        session.outbox.append(Session.Output(bytes: bytes, isEvent: true))
        session.outboxBytes += bytes.count
        noteEventOut()
        markDirty(session)
        if session.pendingBytes > config.limits.maxPendingBytes {
            dropEvents(session)
        }
    }

    /// The watcher is not keeping up: forget its queued events, queue no more,
    /// and owe it one STATE once its socket has drained.
    private func dropEvents(_ session: Session) {
        session.outbox.removeAll(where: \.isEvent)
        session.outboxBytes = session.outbox.reduce(0) { $0 + $1.bytes.count }
        session.owesResync = true
        noteResync()
        log.info("\(session.label) is a slow watcher (over \(config.limits.maxPendingBytes) bytes pending); events dropped, resync owed")
    }

    func markDirty(_ session: Session) {
        guard !session.inDirtyList else { return }
        session.inDirtyList = true
        dirty.append(session)
    }

    /// A client that sends commands faster than it reads replies is not
    /// read from until its output drains: replies are never dropped, so this
    /// is what bounds memory for it.
    func applyBackpressure(_ session: Session) {
        if !session.readingPaused && session.pendingBytes > config.limits.maxPendingBytes {
            session.readingPaused = true
            session.connection.pauseReading()
        }
    }

    /// Runs once per loop turn, before the loop waits for IO: makes batched
    /// journal appends durable, then writes each dirty session's output as
    /// one batch.
    public func flush() {
        if let journal {
            do {
                try journal.syncIfNeeded()
            } catch {
                log.error("fsync of the state file failed: \(error)")
            }
        }
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for session in batch {
            session.inDirtyList = false
            guard !session.isEnded else { continue }
            if session.owesResync && session.watching && session.connection.queuedWriteBytes == 0 && session.endReason == nil {
                session.owesResync = false
                session.outbox.append(Session.Output(bytes: Wire.state(currentState(of: session)), isEvent: false))
            }
            if !session.outbox.isEmpty {
                session.connection.write(session.outbox.map(\.bytes))
                session.outbox.removeAll(keepingCapacity: true)
                session.outboxBytes = 0
            }
            if session.endReason != nil {
                finishEnding(session, graceful: true)
            } else if session.readingPaused && session.pendingBytes <= config.limits.maxPendingBytes / 2 {
                session.readingPaused = false
                session.connection.resumeReading()
            }
        }
        compactJournalIfDue()
    }

    /// Ends a session once its queued output has been flushed.
    func end(_ session: Session, _ reason: CloseReason) {
        guard session.endReason == nil else { return }
        session.endReason = reason
        markDirty(session)
    }

    func finishEnding(_ session: Session, graceful: Bool) {
        guard !session.isEnded else { return }
        session.isEnded = true
        detach(session)
        let reason = session.endReason ?? .peerClosed
        if reason == .busy {
            log.debug("\(session.label) closed: \(reason)")
        } else {
            log.info("\(session.label) closed: \(reason)")
        }
        if graceful {
            session.connection.closeAfterSending()
        } else {
            session.connection.close()
        }
    }
}
