import NavSyncCore
import NavSyncServer

/// What the Redis store knows about one room beyond the hub's view of it:
/// changes sent to Redis and not answered yet, events that must wait, and
/// whether the room's history is being read to fill a gap.
final class RoomTrack {
    /// The state after the last change this daemon sent, while any is in
    /// flight: the next change is judged against it, so changes from one
    /// daemon to one room pipeline instead of waiting for each other.
    var speculative: RoomState?
    /// The revision each change in flight expects, in sending order.
    var expectedInFlight: [UInt64] = []
    /// Published events held back: one that may be this daemon's own change
    /// (its `OK` must go out first), and everything behind it.
    var parked: [PublishedChange] = []
    /// The room's history stream is being read to fill a gap.
    var filling = false
    /// Changes Redis has applied whose event the hub has not reached yet,
    /// by revision: answered when their event arrives, so `OK` comes before
    /// the `EVENT` and after every earlier one.
    var acknowledged: [UInt64: ChangeRequest] = [:]

    var isIdle: Bool {
        speculative == nil && expectedInFlight.isEmpty && parked.isEmpty && !filling && acknowledged.isEmpty
    }

    func removeInFlight(_ expected: UInt64) {
        if let i = expectedInFlight.firstIndex(of: expected) { expectedInFlight.remove(at: i) }
        if expectedInFlight.isEmpty { speculative = nil }
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
    var op: String
    var route: String

    /// `<epoch> <room> <rev> <op> <route>`; nil when malformed.
    static func parse(_ payload: [UInt8]) -> (epoch: String, change: PublishedChange)? {
        let parts = payload.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 5, let rev = UInt64(String(decoding: parts[2], as: UTF8.self)) else { return nil }
        let text = { (bytes: ArraySlice<UInt8>) in String(decoding: bytes, as: UTF8.self) }
        return (text(parts[0]), PublishedChange(room: text(parts[1]), revision: rev, op: text(parts[3]), route: text(parts[4])))
    }
}
