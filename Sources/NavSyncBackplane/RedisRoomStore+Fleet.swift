import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// Following the fleet: published changes applied in revision order, gaps
/// filled from a room's history, unreadable rooms set aside and read again.
extension RedisRoomStore {
    // MARK: - Events from the fleet

    func deliverPush(channel: String, payload: [UInt8]) {
        if channel == keys.catalogChannel {
            fetchCatalog()
            return
        }
        if channel == keys.presenceChannel {
            presence.pushed(payload, epoch: epoch)
            return
        }
        guard let (publishedEpoch, change) = PublishedChange.parse(payload) else {
            log.warn("backplane: ignored a malformed message on \(channel): \(String(decoding: payload.prefix(80), as: UTF8.self))")
            return
        }
        guard publishedEpoch == epoch else {
            fault("a change was published under another epoch: redis lost or replaced the fleet's data")
            return
        }
        received(change)
    }

    /// One published change, in channel order.
    func received(_ change: PublishedChange) {
        let track = track(change.room)
        if !track.parked.isEmpty || track.filling || track.mayBeOwn(change) {
            track.parked.append(change)
            return
        }
        apply(change)
    }

    /// Moves the hub's view by one published change, or starts filling a gap.
    func apply(_ change: PublishedChange) {
        guard let delegate else { return }
        guard unreadableRooms[change.room] == nil else {
            // Another daemon changed it, so its keys may read again now.
            recheck(change.room)
            return
        }
        let view = viewState(change.room).revision
        guard change.revision > view else { return }  // already known (our own, or read from the history)
        let track = track(change.room)
        guard change.revision == view + 1 else {
            track.parked.insert(change, at: 0)
            fillGap(change.room)
            return
        }
        guard let state = state(revision: change.revision, route: change.route, room: change.room) else { return }
        viewTags[change.room] = change.tag
        if let own = track.acknowledged.removeValue(forKey: change.revision) {
            delegate.changeFinished(own, .applied(state))
        } else {
            delegate.roomChanged(change.room, to: state, op: change.op)
        }
    }

    /// Delivers parked events that can no longer be our own change's.
    func releaseParked(_ room: String) {
        guard let track = tracks[room] else { return }
        while !track.filling, let first = track.parked.first, !track.mayBeOwn(first) {
            track.parked.removeFirst()
            apply(first)
        }
        if track.isIdle { tracks[room] = nil }
    }

    /// Reads the room's history after the view's revision; events it holds
    /// in order are applied, a history that starts too late means a resync.
    func fillGap(_ room: String, then: (() -> Void)? = nil) {
        let track = track(room)
        guard !track.filling, let commands else { return }
        track.filling = true
        gapFills += 1
        let from = viewState(room).revision + 1
        commands.send(RoomHistory.command(keys, room: room, from: from)) { [weak self] reply in
            track.filling = false
            defer { track.fillEnded(failure: reply == nil ? Self.lostWhileCatchingUp : nil) }
            guard let self else { return }
            guard let entries = reply?.elements else {
                // No reply: the connection is gone, and the reconnect reads every room again.
                guard reply != nil else { return }
                self.log.error("backplane: history of room \(room) unreadable (\(Self.describe(reply))); reading its state instead")
                self.replaceFromRedis(room, then: then)
                return
            }
            let changes: [PublishedChange]
            switch RoomHistory.read(entries, room: room) {
            case .success(let read): changes = read
            case .failure(let unreadable):
                self.roomUnreadable(room, because: unreadable.why)
                then?()
                return
            }
            if let first = changes.first, first.revision == from {
                self.gapsFilled += UInt64(changes.count)
                for change in changes { self.apply(change) }
            } else if let first = changes.first, first.revision > from {
                // The history no longer reaches back to the view. Its oldest
                // entry carries the whole state at that revision: resync
                // watchers to it, then give them the rest in order (so the
                // hub's own history holds them for WATCH <rev>).
                guard let state = self.state(revision: first.revision, route: first.route, room: room) else {
                    then?()
                    return
                }
                self.replace(room, with: state, tag: first.tag)
                self.gapsFilled += UInt64(changes.count)
                for change in changes.dropFirst() { self.apply(change) }
            } else {
                // Called only when the room is known to be ahead, yet the
                // history holds nothing after the view: read the room whole.
                self.replaceFromRedis(room, then: then)
                return
            }
            then?()
            self.releaseParked(room)
        }
    }

    /// Reads the room's state and hands it to the hub whole (watchers resync).
    func replaceFromRedis(_ room: String, then: (() -> Void)? = nil) {
        guard let commands else { return }
        let track = track(room)
        track.filling = true
        commands.send(StoredRoomHash.command(keys, room: room)) { [weak self] reply in
            track.filling = false
            defer { track.fillEnded(failure: reply == nil ? Self.lostWhileCatchingUp : nil) }
            guard let self, let reply else { return }
            let hash: StoredRoomHash
            switch StoredRoomHash.read(reply) {
            case .success(let read): hash = read
            case .failure(let unreadable):
                // A key of the wrong type, or an error: the room cannot be
                // read, nor changed (the change function fails on it too).
                // Its watchers keep the last state they were given; the
                // rest of the fleet's rooms carry on.
                self.roomUnreadable(room, because: unreadable.why)
                then?()
                return
            }
            let rev = hash.revision
            let state = rev == 0 ? nil : self.state(revision: rev, route: hash.route, room: room)
            if rev != 0 && state == nil {
                then?()
                return
            }
            self.replace(room, with: state, tag: hash.tag)
            then?()
            self.releaseParked(room)
        }
    }

    /// One room's keys answer with an error, hold the wrong type, a route
    /// that does not decode or a revision that is not one: said in the log
    /// (once per cause), its parked events are dropped (they cannot be
    /// placed) and its changes refused until its keys read again. One broken
    /// room must not keep the store down or hold up the others.
    func roomUnreadable(_ room: String, because why: String) {
        if unreadableRooms[room] != why {
            log.error("backplane: room \(room) cannot be read from redis (key \(keys.state(room)): \(why)); "
                      + "its watchers stay at revision \(viewState(room).revision) until its keys are repaired")
        }
        unreadableRooms[room] = why
        tracks[room]?.parked.removeAll()
    }

    /// Reads a room's state hash again (one read at a time per room), after
    /// it was found unreadable or a change of it got an unexpected answer:
    /// a room that decodes now is back, and its watchers are resynced to
    /// it; one that does not is set aside (or stays so).
    func recheck(_ room: String) {
        guard let attempt, !recheckingRooms.contains(room) else { return }
        recheckingRooms.insert(room)
        // A retired attempt drops the answer; `goDown` forgot the recheck
        // and every room is read again on reconnecting.
        attempt.ask(StoredRoomHash.command(keys, room: room)) { [weak self] reply in
            guard let self else { return }
            self.recheckingRooms.remove(room)
            guard let reply else { return }
            defer { self.recheckDone(room) }
            let hash: StoredRoomHash
            switch StoredRoomHash.read(reply) {
            case .success(let read): hash = read
            case .failure(let unreadable):
                self.roomUnreadable(room, because: unreadable.why)
                return
            }
            let rev = hash.revision
            guard let state = self.state(revision: rev, route: hash.route, room: room) else { return }
            // A room that was readable all along keeps its view (its events
            // may be on their way); only a repaired one is replaced.
            guard self.unreadableRooms.removeValue(forKey: room) != nil else { return }
            self.log.info("backplane: room \(room) reads again, at revision \(rev)")
            self.tracks[room]?.known = nil
            let tag = hash.tag
            if state == self.viewState(room) {
                // What was dropped never reached the room: nothing to resync.
                self.viewTags[room] = rev == 0 ? nil : tag
            } else {
                self.replace(room, with: rev == 0 ? nil : state, tag: tag)
            }
        }
    }

    /// Changes that waited for a room's keys to be read again: refused when
    /// it is still unreadable, sent when it reads.
    func recheckDone(_ room: String) {
        guard let delegate, let track = tracks[room], track.inFlight == 0, !track.waiting.isEmpty else { return }
        guard let why = unreadableRooms[room] else {
            startRound(room)
            return
        }
        let refused = track.waiting
        track.waiting.removeAll()
        for (change, _) in refused {
            delegate.changeFinished(change, .refused(ProtocolError(.unavailable, Self.unreadableMessage(room, why))))
        }
        if track.isIdle { tracks[room] = nil }
    }

    func replace(_ room: String, with state: RoomState?, tag: String) {
        guard let delegate else { return }
        resyncedRooms += 1
        viewTags[room] = state == nil ? nil : tag
        delegate.roomReplaced(room, with: state)
        // Changes Redis acknowledged are inside the new state (or were lost with Redis's data).
        if let track = tracks[room] {
            for (_, change) in track.acknowledged.sorted(by: { $0.key < $1.key }) {
                delegate.changeFinished(change, .applied(delegate.storedState(of: room) ?? delegate.changeRules.initialState))
            }
            track.acknowledged.removeAll()
            track.parked.removeAll { $0.revision <= (state?.revision ?? 0) }
        }
    }

    // MARK: - Resuming from a revision of the fleet

    /// BACKPLANE.md (1.3): a resume is judged against the fleet-wide
    /// revision. The room's revision in Redis is read; when it is past the
    /// view (this daemon's subscription is behind), the room's history is
    /// read from the view on, as for a gap, and `done` runs once that fill
    /// has been applied. The published copies of those events, when they
    /// arrive, are already known and dropped, so nobody sees one twice.
    /// `done` runs at once when Redis is away, the room is set aside, or the
    /// view already holds `revision`; and, whatever happens to the
    /// connection, exactly once.
    public var copyMayTrail: Bool { true }

    public func catchUp(_ room: String, to revision: UInt64, then done: @escaping (String?) -> Void) {
        guard isUp, let commands, unreadableRooms[room] == nil, viewState(room).revision < revision else {
            done(nil)
            return
        }
        let sent = commands.send(StoredRoomHash.command(keys, room: room)) { [weak self] reply in
            guard let self, let reply, self.isUp else {
                done(Self.lostWhileCatchingUp)
                return
            }
            let hash: StoredRoomHash
            switch StoredRoomHash.read(reply) {
            case .success(let read): hash = read
            case .failure(let unreadable):
                // Refused by the caller's next look at the room.
                self.roomUnreadable(room, because: unreadable.why)
                done(nil)
                return
            }
            // Not past the view: the client is ahead of the fleet itself, nothing to wait for.
            guard hash.revision > self.viewState(room).revision else {
                done(nil)
                return
            }
            let track = self.track(room)
            track.afterFill.append(done)
            // A fill already under way was sent after this read (one
            // connection answers in order), so it reaches this revision too.
            if !track.filling { self.fillGap(room) }
            if !track.filling { track.fillEnded(failure: Self.lostWhileCatchingUp) }
        }
        if !sent { done(Self.lostWhileCatchingUp) }
    }

    static let lostWhileCatchingUp = "lost the connection to redis while catching up with the fleet"

    // MARK: - The catalog

    func fetchCatalog() {
        commands?.send(["GET", keys.catalog]) { [weak self] reply in
            guard let self, let delegate = self.delegate, case .string(let json) = reply else { return }
            do {
                let fleet = try CatalogFile.decode(json)
                if let difference = delegate.changeRules.catalog.firstDifference(from: fleet) {
                    delegate.catalogChanged(to: fleet)
                    self.log.info("backplane: adopted the fleet's new catalog (\(fleet.screens.count) screens; first change: \(difference))")
                }
            } catch {
                self.log.error("backplane: the catalog stored in redis is not valid, kept ours: \(error)")
            }
        }
    }
}
