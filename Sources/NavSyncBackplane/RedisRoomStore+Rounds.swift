import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// Change rounds: each room's queued changes go to Redis as one call of
/// the change function, and its answer finishes them or sends them round again.
extension RedisRoomStore {
    // MARK: - Changes
    //
    // Each room's changes go to Redis in rounds: while a round is in flight,
    // new changes wait in the room's queue; when its last answer is in, the
    // queue is sent as the next round, each change judged against the state
    // the one before it will make (so a round is one write and, with
    // `appendfsync always`, one fsync in Redis). A change that finds the
    // room moved (another daemon got in first) fails the rest of its round
    // with it; they are judged again, in order, in the next round, against
    // what Redis said it holds. The gap between rounds is also what lets
    // another daemon's round in: daemons racing on one room take turns.

    func viewState(_ room: String) -> RoomState {
        guard let delegate else { return RoomState(stack: [], revision: 0) }
        return delegate.storedState(of: room) ?? delegate.changeRules.initialState
    }

    func track(_ room: String) -> RoomTrack {
        if let track = tracks[room] { return track }
        let track = RoomTrack()
        tracks[room] = track
        return track
    }

    /// A tag no other change of the fleet carries: this daemon's random
    /// name and a count.
    func nextTag() -> String {
        changeCount += 1
        return daemonTag + "." + String(changeCount, radix: 36)
    }

    /// Queues a change for its room's next round; with no round in flight,
    /// that round starts at the end of this loop turn (`endOfTurn`).
    func enqueue(_ change: ChangeRequest, tries: Int) {
        let track = track(change.room)
        track.waiting.append((change, tries))
        if track.inFlight == 0 && !track.roundAwaited {
            track.roundAwaited = true
            roomsAwaitingRound.append(change.room)
        }
    }

    /// The newest state of the room this daemon knows to be real, and the
    /// tag of the change that made it: the view, or what Redis last answered.
    func knownState(_ room: String) -> (RoomState, String) {
        let view = viewState(room)
        if let track = tracks[room], let known = track.known, known.state.revision >= view.revision {
            return (known.state, known.tag)
        }
        return (view, viewTags[room] ?? "")
    }

    /// Sends the room's queue as one round. An `IF` that Redis must check
    /// first ends the round (the rest waits for the next one).
    func startRound(_ room: String) {
        guard let delegate, let track = tracks[room], track.inFlight == 0 else { return }
        guard isUp, commands != nil, epoch != nil else {
            let refused = track.waiting
            track.waiting.removeAll()
            for (change, _) in refused { delegate.changeFinished(change, .refused(ProtocolError(.unavailable, downReason))) }
            return
        }
        if unreadableRooms[room] != nil {
            // Its keys are read again first: a repaired room takes the
            // change, a broken one refuses it (`recheckDone`).
            recheck(room)
            return
        }
        let rules = delegate.changeRules
        var (base, tag) = knownState(room)
        if base.revision == 0 {
            // A round that may give the room its first state: the fleet's room set decides first.
            switch track.admission {
            case .unknown:
                admit(room, track)
                return
            case .asking:
                return
            case .failed(let reason):
                track.admission = .unknown
                let refused = track.waiting
                track.waiting.removeAll()
                for (change, _) in refused { delegate.changeFinished(change, .refused(ProtocolError(.unavailable, reason))) }
                return
            case .admitted, .full:
                break
            }
        }
        let full = base.revision == 0 && track.admission == .full
        if full { track.admission = .unknown }
        // The changes judged so far go as one call, after the state `from`;
        // a confirmation Redis must give in between sends them first, so
        // Redis sees everything in the order it was submitted.
        var from = ChangeFunction.Precondition(revision: base.revision, tag: tag)
        var round: [RoundChange] = []
        while !track.waiting.isEmpty {
            let (change, tries) = track.waiting.removeFirst()
            guard tries < Self.maxAttempts else {
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "the room kept changing under this request; try again")))
                continue
            }
            // IF against a revision the round does not start from: only Redis can tell.
            if let expected = change.ifRevision, expected != base.revision {
                send(round, of: room, after: from)
                confirm(change, expecting: .exactly(expected), tries: tries)
                return
            }
            let precondition = ChangeFunction.Precondition(revision: base.revision, tag: tag)
            let outcome = rules.evaluate(change.mutation, ifRevision: change.ifRevision, against: base)
            guard case .applied(let changed) = outcome else {
                send(round, of: room, after: from)
                round = []
                from = precondition
                confirm(change, expecting: precondition, tries: tries) { outcome }
                continue
            }
            if full && base.revision == 0 {
                delegate.changeFinished(change, .refused(rules.roomLimitError))
                continue
            }
            guard changed.revision <= StoredRevision.largest else {
                // The one revision past it is the largest 64-bit value, which
                // Redis may not hold (every daemon would take the room as unreadable).
                delegate.changeFinished(change, .refused(ProtocolError(.limit,
                    "the room's revision is at its maximum (\(base.revision)); it cannot change any more")))
                continue
            }
            let newTag = nextTag()
            round.append(RoundChange(change: change, changed: changed, tag: newTag, tries: tries))
            (base, tag) = (changed, newTag)
        }
        send(round, of: room, after: from)
    }

    /// One change of a round: the state it makes and the tag it gives it.
    struct RoundChange {
        var change: ChangeRequest
        var changed: RoomState
        var tag: String
        var tries: Int
        /// The revision it is judged against.
        var expected: UInt64 { changed.revision - 1 }
    }

    /// Sends `round` to Redis as one call of the change function, judged
    /// from `precondition` on.
    func send(_ round: [RoundChange], of room: String, after precondition: ChangeFunction.Precondition) {
        guard !round.isEmpty, let delegate else { return }
        let steps = round.map { ChangeFunction.Step(route: $0.changed.route, op: $0.change.mutation.op, tag: $0.tag) }
        guard let commands, let epoch,
              commands.send(ChangeFunction.call(keys: keys, epoch: epoch, room: room, expected: precondition,
                                                steps: steps, history: historyBounds),
                            then: { [weak self] reply in self?.answered(round, of: room, reply: reply) }) else {
            for item in round { delegate.changeFinished(item.change, .refused(ProtocolError(.unavailable, downReason))) }
            return
        }
        let track = track(room)
        track.inFlight += round.count
        track.expectedInFlight += round.map(\.expected)
    }

    /// Asks the fleet's room set to count the room (`--max-rooms` across the
    /// fleet); the room's queue waits for the answer.
    func admit(_ room: String, _ track: RoomTrack) {
        guard let delegate, let commands else { return }
        track.admission = .asking
        let call = ChangeFunction.admitCall(keys: keys, room: room, maxRooms: delegate.changeRules.maxRooms)
        let sent = commands.send(call) { [weak self, weak track] reply in
            guard let self, let track else { return }
            switch reply?.text {
            case "known", "added": track.admission = .admitted
            case "full": track.admission = .full
            case nil where reply == nil:
                // The connection is gone: the queue is refused as unavailable, and asked again once back.
                track.admission = .unknown
            default:
                let why = "redis refused to count the room: \(Self.describe(reply))"
                self.log.error("backplane: \(why)")
                track.admission = .failed(why)
            }
            self.roundStepDone(room)
        }
        if sent {
            track.inFlight += 1
        } else {
            track.admission = .failed(downReason)
            startRound(room)
        }
    }

    /// One answer of a round is in; the last one starts the next round.
    func roundStepDone(_ room: String) {
        guard let track = tracks[room] else { return }
        track.inFlight -= 1
        if track.inFlight == 0 {
            track.waiting.insert(contentsOf: track.retrying, at: 0)
            track.retrying.removeAll()
            if !track.waiting.isEmpty { startRound(room) }
        }
    }

    /// Redis's answer to a round: every change applied, or none (the room
    /// had moved: each is judged again in the next round).
    func answered(_ round: [RoundChange], of room: String, reply: RedisReply?) {
        let answer = ChangeFunction.Answer(reply)
        if case .applied(let revision) = answer, let last = round.last, revision != last.changed.revision {
            // Out of step with what was sent: the connection is started
            // over, and the round is answered as one cut off with it.
            fault("redis applied revision \(revision) where \(last.changed.revision) was sent")
            for item in round { answered(item, nil, reply: nil) }
            return
        }
        for item in round {
            if case .applied = answer {
                answered(item, .applied(revision: item.changed.revision), reply: reply)
            } else {
                answered(item, answer, reply: reply)
            }
        }
    }

    func answered(_ item: RoundChange, _ answer: ChangeFunction.Answer?, reply: RedisReply?) {
        guard let delegate else { return }
        let (change, changed, tag, tries) = (item.change, item.changed, item.tag, item.tries)
        let room = change.room
        let track = track(room)
        track.removeInFlight(item.expected)
        defer {
            roundStepDone(room)
            releaseParked(room)
        }
        switch answer {
        case .applied(let revision):
            // The next round starts from here, even before the event arrives.
            learned(room, changed, tag: tag)
            let view = viewState(room).revision
            if view + 1 == revision {
                viewTags[room] = tag
                delegate.changeFinished(change, .applied(changed))
            } else if view >= revision {
                // Already reached through a resync: only the reply is owed.
                delegate.changeFinished(change, .applied(changed))
            } else {
                // Earlier events are still on their way: answer when ours arrives.
                track.acknowledged[revision] = change
            }
        case .state(let revision, let route, let madeBy, _):
            retriedChanges += 1
            guard let current = state(revision: revision, route: route, room: room, refusing: change) else { return }
            learned(room, current, tag: madeBy)
            if let expected = change.ifRevision, expected != current.revision {
                // Redis's own current revision, just read: the IF is decided.
                delegate.changeFinished(change, .refused(ProtocolError(.conflict, "current=\(current.revision)")))
            } else {
                track.retrying.append((change, tries + 1))
            }
        case nil:
            if reply == nil {
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "lost the connection to redis; the change may or may not have been applied")))
            } else {
                log.error("backplane: unexpected answer to a change of room \(room): \(Self.describe(reply))")
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable, "redis refused the change: \(Self.describe(reply))")))
                // A key of the wrong type or a revision that is not one: the
                // room's own keys tell whether the room is the problem.
                recheck(room)
            }
        }
    }

    /// Remembers the newest state Redis reported for a room, for the next round.
    func learned(_ room: String, _ state: RoomState, tag: String) {
        let track = track(room)
        if state.revision >= (track.known?.state.revision ?? 0) { track.known = (state, tag) }
    }

    /// Asks Redis whether the room is still as `expected`: if so, the
    /// outcome stands (`decided`), or the change is judged against it in
    /// the next round; if not, it is judged again there.
    func confirm(_ change: ChangeRequest, expecting expected: ChangeFunction.Precondition, tries: Int,
                         decided: (() -> ChangeOutcome)? = nil) {
        guard let delegate, let commands, let epoch else { return }
        let room = change.room
        let call = ChangeFunction.call(keys: keys, epoch: epoch, room: room, expected: expected, steps: [],
                                       history: historyBounds)
        let sent = commands.send(call) { [weak self] reply in
            guard let self, let delegate = self.delegate else { return }
            defer {
                self.roundStepDone(room)
                self.releaseParked(room)
            }
            switch ChangeFunction.Answer(reply) {
            case .state(let current, let route, let madeBy, let matched):
                guard let state = self.state(revision: current, route: route, room: room, refusing: change) else { return }
                self.learned(room, state, tag: madeBy)
                if matched, let decided {
                    delegate.changeFinished(change, decided())
                } else if change.ifRevision != nil && change.ifRevision != current {
                    delegate.changeFinished(change, .refused(ProtocolError(.conflict, "current=\(current)")))
                } else {
                    self.track(room).retrying.append((change, tries + 1))
                }
            default:
                delegate.changeFinished(change, .refused(ProtocolError(.unavailable,
                    reply == nil ? "lost the connection to redis" : "redis refused the request: \(Self.describe(reply))")))
            }
        }
        if sent {
            track(room).inFlight += 1
        } else {
            delegate.changeFinished(change, .refused(ProtocolError(.unavailable, downReason)))
        }
    }

    /// `state(revision:route:room:)` for the answer to `change`, which is
    /// refused when the route does not decode.
    func state(revision: UInt64, route: String, room: String, refusing change: ChangeRequest) -> RoomState? {
        if let state = state(revision: revision, route: route, room: room) { return state }
        delegate?.changeFinished(change, .refused(ProtocolError(.unavailable,
            Self.unreadableMessage(room, unreadableRooms[room] ?? "its keys do not decode"))))
        return nil
    }

    /// A room state from Redis's rev and route. A route that does not decode
    /// is a fault of that room's data alone: the room is set aside as
    /// unreadable (logged, refused) and every other room carries on.
    func state(revision: UInt64, route: String, room: String) -> RoomState? {
        if let state = decodedState(revision: revision, route: route) { return state }
        roomUnreadable(room, because: "its stored route at revision \(revision) does not decode: \"\(route.prefix(80))\"")
        return nil
    }

    /// The state Redis's rev and route stand for, or nil when the route does not decode.
    func decodedState(revision: UInt64, route: String) -> RoomState? {
        guard let delegate else { return nil }
        if revision == 0 { return delegate.changeRules.initialState }
        guard case .success(let navigation) = Route.decode(route), !navigation.stack.isEmpty else { return nil }
        // The route carries the sheets too: the store needs no change for them.
        return RoomState(navigation, revision: revision)
    }

    static func unreadableMessage(_ room: String, _ why: String) -> String {
        "room \(room) cannot be read from redis (\(why)); it stays so until its keys are repaired"
    }
}
