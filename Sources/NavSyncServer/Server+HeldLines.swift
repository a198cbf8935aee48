/// Input is not run past the output it would make. Replies are never
/// dropped, so the one thing that bounds the memory a client's replies take
/// is to stop running its lines once its queued output (replies, events,
/// pongs, frames: `Session.pendingBytes`, whatever produced them) passes
/// `--max-pending`. The lines already read wait in the session's framer,
/// reading is paused, and both resume once the output has drained to half
/// the bound. Pausing the socket alone is not enough: one read can carry
/// thousands of `GET`s, each answered with a route of hundreds of
/// kilobytes.
extension Server {
    /// Called when `runFrames` stops with input left over because the
    /// session's output is over the bound.
    func holdLinesForOutput(_ session: Session) {
        if !session.linesHeldForOutput {
            session.linesHeldForOutput = true
            sessionsHoldingLines.append(session)
        }
        fanOut.applyBackpressure(session)
    }

    /// Runs at the start of every flush: sessions whose output has drained
    /// to half the bound run their held lines (which may hold them again).
    /// Their answers are flushed in this same turn.
    func runLinesHeldForOutput() {
        guard !sessionsHoldingLines.isEmpty else { return }
        let held = sessionsHoldingLines
        sessionsHoldingLines.removeAll(keepingCapacity: true)
        let resumeAt = limits.maxPendingBytes / 2
        for session in held {
            session.linesHeldForOutput = false
            guard !session.isClosing else { continue }
            guard session.pendingBytes <= resumeAt else {
                session.linesHeldForOutput = true
                sessionsHoldingLines.append(session)
                continue
            }
            runFrames(session)
            if session.changes.waitingForStore { pauseIfHeldBehindStore(session) }
            guard !session.linesHeldForOutput, !session.isClosing else { continue }
            if !endInputIfOwed(session) {
                // Nothing it ran may have made output (a half line): reading
                // must not wait for a flush that has nothing to send.
                fanOut.resumeReadingIfDrained(session)
            }
        }
    }

    /// Some session holds lines and its output has drained enough to run
    /// them: the loop must come round again even if no socket has news
    /// (its socket may have taken the last answers at once, with no write
    /// callback to follow).
    public var hasHeldLinesReadyToRun: Bool {
        let resumeAt = limits.maxPendingBytes / 2
        return sessionsHoldingLines.contains { !$0.isClosing && $0.pendingBytes <= resumeAt }
    }

    /// `--max-pending`: the one bound on a connection's queued output, for
    /// transports that decide themselves when to stop reading (HTTP).
    public var maxPendingOutputBytes: Int { limits.maxPendingBytes }

    /// Output that did not come from a line (a WebSocket's pongs, queued by
    /// the framing layer) counts against the same bound: past it, reading
    /// pauses until the output drains, exactly as for replies.
    public func outputQueuedOutsideLines(for session: Session) {
        guard !session.isClosing else { return }
        fanOut.applyBackpressure(session)
    }
}
