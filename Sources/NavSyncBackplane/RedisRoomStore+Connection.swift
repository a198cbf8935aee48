import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// The store's side of its connection (`BackplaneConnection`): what it
/// reads after each connect, and what it forgets or refuses when the
/// connection goes down.
extension RedisRoomStore: BackplaneConnectionOwner {
    var hub: RoomStoreDelegate? { delegate }

    func connectionFoundNewEpoch() { forgetEveryRoom() }

    func connectionSubscribed(_ attempt: RedisAttempt, up: @escaping () -> Void) {
        readEveryRoom(attempt, then: up)
    }

    func connectionBecameUp() {
        presence.republishOwnMembers(on: commands, epoch: epoch)
    }

    func connectionReceived(channel: String, payload: [UInt8]) {
        deliverPush(channel: channel, payload: payload)
    }

    func connectionHeartbeat(_ attempt: RedisAttempt) {
        presence.renew(attempt, epoch: epoch)
    }

    func connectionWentDown(because reason: String) {
        // A read of the members again ends with the attempt; the reconnect reads them anyway.
        presence.connectionLost()
        // Reads of the old connections may never be answered; every room is read again on reconnecting.
        recheckingRooms.removeAll()
        for (_, track) in tracks {
            track.parked.removeAll()
            track.filling = false
        }
        // Resumes that waited for a fill are answered now (the store is down: refused).
        for (_, track) in tracks { track.fillEnded(failure: reason) }
        // Changes still queued (none in flight for their room) are refused now, in order.
        for (room, track) in tracks where track.inFlight == 0 && !track.waiting.isEmpty { startRound(room) }
    }

    /// Something Redis said cannot be trusted: start the connection over,
    /// which re-reads every room.
    func fault(_ reason: String) { connection.fault(reason) }

    /// A refusal while reading after a connect (see `BackplaneConnection.refuse`).
    func refuse(_ reason: String) { connection.refuse(reason) }

    /// Every room back to "never changed"; watchers are resynced, and the
    /// rooms Redis holds now are read next.
    func forgetEveryRoom() {
        guard let delegate else { return }
        for room in delegate.roomStates.keys.sorted() { replace(room, with: nil, tag: "") }
        tracks.removeAll()
        viewTags.removeAll()
    }

    /// After subscribing (so no change falls between): every room Redis
    /// holds, compared with the view; behind is filled from the history or
    /// resynced, ahead (Redis lost changes) is resynced.
    func readEveryRoom(_ attempt: RedisAttempt, then up: @escaping () -> Void) {
        attempt.ask(["SMEMBERS", keys.rooms]) { [weak self] reply in
            guard let self, let delegate = self.delegate else { return }
            guard let members = reply?.elements else {
                if reply != nil { self.refuse("redis answered SMEMBERS \(self.keys.rooms) with \(Self.describe(reply))") }
                return
            }
            var names = Set(members.compactMap(\.text).filter(Names.isValid))
            names.formUnion(delegate.roomStates.keys)
            // Every room is judged afresh: one repaired while this daemon was
            // cut off reads again, one broken meanwhile is found.
            names.formUnion(self.unreadableRooms.keys)
            self.unreadableRooms.removeAll()
            var waiting = names.count + 1
            let oneDone = {
                waiting -= 1
                // Then the fleet's members; that read makes the store up.
                if waiting == 0 { self.presence.readFleetMembers(attempt, then: up) }
            }
            for room in names.sorted() {
                attempt.ask(StoredRoomHash.command(self.keys, room: room)) { reply in
                    guard let reply else { return }
                    switch StoredRoomHash.read(reply) {
                    case .success(let hash):
                        self.reconcile(room, rev: hash.revision, route: hash.route, tag: hash.tag, then: oneDone)
                    case .failure(let unreadable):
                        self.roomUnreadable(room, because: unreadable.why)
                        oneDone()
                    }
                }
            }
            oneDone()
        }
    }

    func reconcile(_ room: String, rev: UInt64, route: String, tag: String, then: @escaping () -> Void) {
        let view = viewState(room)
        // A room whose state does not decode is set aside here, before
        // anything replaces the view with it.
        if rev != 0 && state(revision: rev, route: route, room: room) == nil {
            then()
            return
        }
        if rev == view.revision {
            if rev != 0 && route != view.route {
                replace(room, with: state(revision: rev, route: route, room: room), tag: tag)
            } else if rev != 0 {
                viewTags[room] = tag
            }
            then()
        } else if rev > view.revision {
            fillGap(room, then: then)
        } else {
            log.warn("backplane: room \(room) is at revision \(rev) in redis, behind this daemon's \(view.revision): resynced")
            replace(room, with: rev == 0 ? nil : state(revision: rev, route: route, room: room), tag: tag)
            then()
        }
    }

    static func describe(_ reply: RedisReply?) -> String {
        guard let reply else { return "no reply" }
        switch reply {
        case .error(let text): return text
        case .status(let text): return text
        case .string(let bytes): return "\"\(String(decoding: bytes.prefix(80), as: UTF8.self))\""
        case .integer(let value): return String(value)
        case .null: return "nil"
        case .array(let elements): return "an array of \(elements.count)"
        }
    }
}
