import NavSyncCore

/// One session's changes on their way through the store, and the ordering
/// rules that keep its replies in the order of its commands: each change
/// takes a ticket, answers go out in ticket order whatever order the store
/// answers in, and a command that is not a change (or a change the store
/// cannot take behind the others) waits until the changes in flight are
/// answered. The server does the answering and the running; this type only
/// decides what may go when.
///
/// A value type held in place by `Session`, so each step is a plain field
/// update, with no allocation beyond the early outcomes it must keep.
struct ChangePipeline {
    /// Changes of one session in flight at once, at most: past it, its
    /// lines wait (memory per connection stays bounded however much it pipelines).
    static let maxChangesInFlight = 128

    /// Lines wait in the framer until the store has answered this session's
    /// changes in flight (a command that is not a change, a change the store
    /// cannot take behind them, or too many of them).
    private(set) var waitingForStore = false
    /// Changes handed to the store and not answered yet, all for the
    /// session's room (a JOIN waits for them).
    private(set) var changesInFlight = 0
    /// The last change submitted lets the store take another one of this
    /// session before it is answered.
    private(set) var nextChangeMayFollow = false
    /// The command read while changes were in flight that must wait for them.
    private(set) var commandBehindChanges: Command?
    /// Tickets: each change gets the next one; answers go out in ticket order.
    private(set) var nextTicket: UInt64 = 0
    private(set) var nextTicketToAnswer: UInt64 = 0
    /// Outcomes the store gave before those of earlier changes, by ticket.
    private var earlyOutcomes: [UInt64: (ChangeRequest, ChangeOutcome)] = [:]
    /// The server is running this session's lines (a store that answers
    /// at once must not start running them again from inside).
    var isRunningLines = false
    /// Its input ended while a change was with the store.
    var inputEndedWhileWaiting = false
    /// Reading was paused because lines piled up behind a change in flight.
    var pausedForStore = false
    /// A resume from a revision past this daemon's copy of the room waits
    /// for the store to bring the copy up to it (`Server.resumeWatch`).
    private(set) var waitingForCatchUp = false

    /// Nothing of this session is with the store, and nothing waits for it.
    var isIdle: Bool { !waitingForStore && changesInFlight == 0 }

    /// Whether `command` may run while the session's changes are in flight:
    /// only another change, taken behind them by the store. Anything else
    /// (its answer could show state or must come after theirs) waits.
    func mayRunBesideChangesInFlight(_ command: Command, storeIsAvailable: Bool) -> Bool {
        guard case .mutate = command else { return false }
        return nextChangeMayFollow && commandBehindChanges == nil
            && changesInFlight < Self.maxChangesInFlight && storeIsAvailable
    }

    /// Lines wait until the store has brought the room's copy up to date.
    mutating func beginCatchUp() {
        waitingForCatchUp = true
        updateWaiting()
    }

    mutating func endCatchUp() {
        waitingForCatchUp = false
        updateWaiting()
    }

    /// `command` must wait for the changes in flight; it runs once they are answered.
    mutating func holdBehindChanges(_ command: Command) {
        commandBehindChanges = command
        waitingForStore = true
    }

    /// The command that waited, once the changes in flight are all answered; nil before.
    mutating func takeCommandBehindChanges() -> Command? {
        guard changesInFlight == 0, let command = commandBehindChanges else { return nil }
        commandBehindChanges = nil
        updateWaiting()
        return command
    }

    /// A change is about to go to the store: it takes the next ticket, and
    /// the session waits until `submitted` says whether another may follow.
    mutating func takeTicket() -> UInt64 {
        let ticket = nextTicket
        nextTicket += 1
        changesInFlight += 1
        waitingForStore = true
        return ticket
    }

    /// Whether the change with `ticket` is still with the store (not answered, not even early).
    func isInFlight(ticket: UInt64) -> Bool {
        ticket >= nextTicketToAnswer && earlyOutcomes[ticket] == nil
    }

    /// The store has taken the change: whether the session's next change may
    /// follow it before it is answered (it was answered already, or the
    /// store pipelines behind it).
    mutating func submitted(nextChangeMayFollow: Bool) {
        self.nextChangeMayFollow = nextChangeMayFollow
        updateWaiting()
    }

    /// The store answered `change`. Returns true when its answer may go out
    /// now (every earlier one has); false when an earlier change is still in
    /// flight, and the caller keeps its outcome with `holdEarly`.
    mutating func storeAnswered(_ change: ChangeRequest) -> Bool {
        changesInFlight -= 1
        return change.ticket == nextTicketToAnswer
    }

    /// Keeps an outcome that came before those of earlier changes.
    mutating func holdEarly(_ change: ChangeRequest, _ outcome: ChangeOutcome) {
        earlyOutcomes[change.ticket] = (change, outcome)
    }

    /// After the answer due now went out: the next one, if the store gave it early.
    mutating func answerSent() -> (ChangeRequest, ChangeOutcome)? {
        nextTicketToAnswer += 1
        return earlyOutcomes.removeValue(forKey: nextTicketToAnswer)
    }

    /// After a store's answer has been taken in: with nothing left in flight
    /// the next change starts a fresh run (the store is asked again).
    mutating func settle() {
        if changesInFlight == 0 { nextChangeMayFollow = false }
        updateWaiting()
    }

    private mutating func updateWaiting() {
        waitingForStore = waitingForCatchUp || changesInFlight > 0
            && (!nextChangeMayFollow || commandBehindChanges != nil
                || changesInFlight >= Self.maxChangesInFlight)
    }
}
