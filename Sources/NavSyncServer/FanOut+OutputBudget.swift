/// `--max-output-memory`: one bound on the output the daemon holds for all
/// connections together. `--max-pending` caps each watcher, but ten
/// thousand watchers that stop reading could still hold ten thousand times
/// that. Past the global bound the watchers with the largest queues are
/// resynced first, the way Redis's `maxmemory-clients` evicts the biggest
/// clients: their queued events are dropped, nothing more is queued for
/// them, and each is sent one fresh `STATE` once its socket has drained.
///
/// Output already handed to the transport cannot be taken back, so what a
/// resync saves is the growth: a resynced queue only shrinks from then on.
/// After each flush over the bound, resyncing goes on, largest queue first,
/// until the queues still taking events hold at most an eighth of the
/// bound; small queues (a reader a moment behind) are left alone while the
/// big ones account for the excess. In the flush itself, while the total is
/// past the bound, a watcher already behind is resynced instead of being
/// handed more when its socket sent nothing since its last flush (stalled:
/// its bytes are not coming back) or the queues grew by more than that
/// eighth in this flush; and a watcher whose socket has taken everything so
/// far, when its turn could pass the bound, gets only what its socket takes
/// at once plus the rest of a line cut short (`offerWithoutQueuing`). So
/// thousands of stuck watchers pass the bound by one turn and a line each at
/// most, not by a turn of events each; measured with 5,000 of them and a 32 MiB bound:
/// 32 MiB held, where the per-flush eighth alone let it reach 53 MiB.
extension FanOut {
    /// Share of the bound that queues still taking events may keep once the
    /// bound has been passed.
    static let outputBudgetGrowthShare = 8

    /// The output held now, counted as `keepOutputWithinBudget` counts it:
    /// each session's own share, and each shared turn buffer once.
    func countHeldOutput() -> Int {
        var own = 0
        for session in backlogged where !session.isEnded && session.pendingBytes > 0 {
            own += session.output.queuedBytes + session.connection.queuedOwnMemory
        }
        return own + sharedLedger.heldBytes
    }

    /// Called after each flush while some transport holds unsent output.
    func keepOutputWithinBudget() {
        // Runs after every flush in which some socket was full, over every
        // such session (all 10,000 watchers in a burst), so the usual case,
        // under the bound, only sums and compacts: the list of candidates
        // is built only once the bound is passed.
        // Each session's own memory is summed; the shared turn buffers its
        // queued writes point into are in the ledger, once each.
        var own = 0
        var kept = 0
        for session in backlogged {
            let bytes = session.isEnded ? 0 : session.pendingBytes
            guard bytes > 0 else {
                session.output.leftBacklog()
                continue
            }
            backlogged[kept] = session
            kept += 1
            own += session.output.queuedBytes + session.connection.queuedOwnMemory
        }
        backlogged.removeLast(backlogged.count - kept)
        heldOwnBytes = own
        let total = heldOutputBytes
        let bound = limits.maxOutputMemoryBytes
        guard total > bound else { return }
        var growing: [(session: Session, bytes: Int)] = []
        // Presence followers that do not watch grow like watchers and are resynced alike.
        for session in backlogged where (session.watching || session.presence.follows) && !session.output.owesResync && !session.isClosing {
            growing.append((session, session.pendingBytes))
        }
        guard !growing.isEmpty else { return }
        growing.sort { $0.bytes > $1.bytes }
        var growingBytes = growing.reduce(0) { $0 + $1.bytes }
        var resynced = 0
        for (session, bytes) in growing where growingBytes > bound / Self.outputBudgetGrowthShare {
            dropEvents(session, reason: "output of all connections over \(bound) bytes (--max-output-memory)")
            growingBytes -= bytes
            resynced += 1
        }
        log.warn("output held for connections is \(total) bytes (\(sharedLedger.heldBytes) in shared turn buffers), "
                 + "over --max-output-memory \(bound): "
                 + "\(resynced) watcher(s) with the largest queues resynced")
    }
}

