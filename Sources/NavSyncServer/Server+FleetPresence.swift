import NavSyncCore

/// Members of the other daemons of a fleet, as the store reports them:
/// they join the rooms' member lists beside this daemon's own, and their
/// changes reach the followers as any member's do.
extension Server {
    public func memberChangedElsewhere(_ member: Member, in room: String) {
        presence.set(member, in: room, isLocal: false)
    }

    public func memberGoneElsewhere(_ id: String, from room: String) {
        presence.remove(id, from: room, isLocal: false)
    }

    public func membersReplaced(in room: String, with members: [Member]) {
        presence.replaceMembers(of: room, with: members)
    }

    public var roomsWithMembers: [String] { presence.names }

    /// Each follower's lines not yet taken are superseded by the listing,
    /// which is queued whole after what it was already handed.
    public func relistPresence() {
        settlePresence()
        for room in presence.allRooms {
            for follower in room.followers where !follower.isClosing {
                room.markTaken(follower)
                guard !follower.presence.owesListing else { continue }
                fanOut.reply(follower, Wire.members(room.members, unasked: true))
            }
        }
    }
}
