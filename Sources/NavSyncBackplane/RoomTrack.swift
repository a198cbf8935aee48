import NavSyncCore
import NavSyncServer

/// What the Redis store knows about one room beyond the hub's view of it:
/// changes sent to Redis and not answered yet, events that must wait, and
/// whether the room's history is being read to fill a gap.
final class RoomTrack {
    /// Changes waiting for the room's next round, in the order they go.
    var waiting: [(change: ChangeRequest, tries: Int)] = []
    /// Changes of the round in flight that found the room moved: first in the next round.
    var retrying: [(change: ChangeRequest, tries: Int)] = []
    /// Requests of the round in flight not answered yet (the room set's
    /// answer to `admit` counts as one).
    var inFlight = 0
    /// Listed to start a round at the end of this loop turn.
    var roundAwaited = false
    /// Whether the fleet's room set counts this room (asked before a round
    /// that would give it its first state).
    var admission = Admission.unknown

    enum Admission: Equatable {
        case unknown, asking, admitted, full
        case failed(String)
    }
    /// The newest state Redis reported for the room (with the tag of the
    /// change that made it), possibly ahead of the view.
    var known: (state: RoomState, tag: String)?
    /// The revision each change in flight expects, in sending order.
    var expectedInFlight: [UInt64] = []
    /// Published events held back: one that may be this daemon's own change
    /// (its `OK` must go out first), and everything behind it.
    var parked: [PublishedChange] = []
    /// The room's history stream is being read to fill a gap.
    var filling = false
    /// Resumes from a revision past the view (`catchUp`), answered when
    /// the fill in progress ends.
    var afterFill: [(String?) -> Void] = []
    /// Changes Redis has applied whose event the hub has not reached yet,
    /// by revision: answered when their event arrives, so `OK` comes before
    /// the `EVENT` and after every earlier one.
    var acknowledged: [UInt64: ChangeRequest] = [:]

    var isIdle: Bool {
        inFlight == 0 && !roundAwaited && waiting.isEmpty && retrying.isEmpty && expectedInFlight.isEmpty && parked.isEmpty
            && !filling && acknowledged.isEmpty && afterFill.isEmpty
    }

    /// The fill has ended (and not gone on into another read): the
    /// resumes that waited for it are answered, with why it failed when it did.
    func fillEnded(failure: String?) {
        guard !filling, !afterFill.isEmpty else { return }
        let waiting = afterFill
        afterFill.removeAll()
        for done in waiting { done(failure) }
    }

    func removeInFlight(_ expected: UInt64) {
        if let i = expectedInFlight.firstIndex(of: expected) { expectedInFlight.remove(at: i) }
    }

    /// May this event be the answer to one of our changes still in flight?
    func mayBeOwn(_ change: PublishedChange) -> Bool {
        change.revision > 0 && expectedInFlight.contains(change.revision - 1)
    }
}

/// One change as published on the fleet's channel or read from a room's history.
struct PublishedChange: Equatable {
    var room: String
    var revision: UInt64
    /// Which change made it (see `ChangeFunction.Precondition`).
    var tag: String
    var op: String
    var route: String

    /// `<epoch> <room> <rev> <tag> <op> <route>`; nil when malformed.
    static func parse(_ payload: [UInt8]) -> (epoch: String, change: PublishedChange)? {
        let parts = payload.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 6, let rev = StoredRevision.parse(String(decoding: parts[2], as: UTF8.self)) else { return nil }
        let text = { (bytes: ArraySlice<UInt8>) in String(decoding: bytes, as: UTF8.self) }
        return (text(parts[0]), PublishedChange(room: text(parts[1]), revision: rev, tag: text(parts[3]),
                                                op: text(parts[4]), route: text(parts[5])))
    }
}
