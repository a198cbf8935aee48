import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// The connection's life: connect, handshake (version, function, epoch,
/// catalog, subscription, every room read), heartbeat, outages and reconnects.
extension RedisRoomStore {
    // MARK: - Connecting

    func connect() {
        guard !closed else { return }
        attempt = RedisAttempt(connector: makeLink,
                               onBothReady: { [weak self] attempt in self?.handshake(attempt) },
                               onLost: { [weak self] attempt, reason in self?.lost(attempt, reason) })
    }

    /// Checks the server, loads the function, agrees on the epoch and the
    /// catalog, subscribes, reads every room; then the store is up.
    func handshake(_ attempt: RedisAttempt) {
        let step = { [weak self] (what: String, reply: RedisReply?, next: () -> Void) in
            guard let self else { return }
            if let error = reply?.errorText {
                self.backoff.redisIsLoading = error.hasPrefix("LOADING")
                self.refuse("redis refused \(what): \(error)")
                return
            }
            guard reply != nil else { return }  // the connection is gone; `lost` handles it
            next()
        }
        attempt.ask(["INFO", "server"]) { reply in
            step("INFO", reply) {
                let info = reply?.text ?? ""
                let version = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("redis_version:") }
                    .map { String($0.dropFirst("redis_version:".count)) } ?? "unknown"
                guard let major = Int(version.prefix { $0 != "." }), major >= 7 else {
                    self.refuse("redis \(version) is too old: the backplane needs 7.0 or newer (functions)", fatal: true)
                    return
                }
                attempt.ask(["FUNCTION", "LOAD", "REPLACE", ChangeFunction.source]) { reply in
                    step("FUNCTION LOAD", reply) {
                        // The members function, a library of its own.
                        attempt.ask(["FUNCTION", "LOAD", "REPLACE", MembersFunction.source]) { reply in
                            step("FUNCTION LOAD", reply) { self.agreeOnEpoch(attempt) }
                        }
                    }
                }
            }
        }
    }

    func agreeOnEpoch(_ attempt: RedisAttempt) {
        var generator = SystemRandomNumberGenerator()
        let fresh = String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
        attempt.ask(["SET", keys.epoch, fresh, "NX"]) { _ in }
        attempt.ask(["GET", keys.epoch]) { [weak self] reply in
            guard let self, let value = reply?.text else { return }
            if let known = self.epoch, known != value {
                self.log.warn("backplane: redis holds a new epoch (its data was lost or replaced): every room is resynced")
                self.forgetEveryRoom()
            }
            self.epoch = value
            self.agreeOnCatalog(attempt)
        }
    }

    /// Every room back to "never changed"; watchers are resynced, and the
    /// rooms Redis holds now are read next.
    func forgetEveryRoom() {
        guard let delegate else { return }
        for room in delegate.roomStates.keys.sorted() { replace(room, with: nil, tag: "") }
        tracks.removeAll()
        viewTags.removeAll()
    }

    func agreeOnCatalog(_ attempt: RedisAttempt) {
        guard let delegate else { return }
        let ours = delegate.changeRules.catalog
        let starting = startCompletion != nil
        attempt.ask([Array("SET".utf8), Array(keys.catalog.utf8), CatalogFile.encode(ours), Array("NX".utf8)]) { _ in }
        attempt.ask(["GET", keys.catalog]) { [weak self] reply in
            guard let self, case .string(let json) = reply else { return }
            let fleet: Catalog
            do {
                fleet = try CatalogFile.decode(json)
            } catch {
                guard starting && self.settings.replaceCatalog else {
                    self.refuse("the fleet's catalog in redis (\(self.keys.catalog)) is not valid: \(error)", fatal: starting)
                    return
                }
                fleet = ours
            }
            if let difference = ours.firstDifference(from: fleet) {
                if starting && self.settings.replaceCatalog && fleet.initial != ours.initial {
                    // --replace-catalog works as a SIGHUP would, and a reload may not move `initial`:
                    // rooms never changed would show another screen at the same revision.
                    self.refuse("--replace-catalog cannot change the fleet's initial screen (\(difference))", fatal: true)
                    return
                } else if starting && self.settings.replaceCatalog {
                    attempt.ask([Array("SET".utf8), Array(self.keys.catalog.utf8), CatalogFile.encode(ours)]) { _ in }
                    attempt.ask(["PUBLISH", self.keys.catalogChannel, "changed"]) { _ in }
                    self.log.warn("backplane: replaced the fleet's catalog with this daemon's (--replace-catalog; first difference: \(difference))")
                } else if starting {
                    self.refuse("this daemon's catalog differs from the fleet's in redis (\(self.keys.catalog)): \(difference); "
                                + "start it with the same --screens file, or with --replace-catalog to make it the fleet's", fatal: true)
                    return
                } else {
                    delegate.catalogChanged(to: fleet)
                    self.log.info("backplane: adopted the fleet's catalog, changed while this daemon was cut off (first difference: \(difference))")
                }
            }
            self.subscribe(attempt)
        }
    }

    func subscribe(_ attempt: RedisAttempt) {
        var confirmations = 0
        heldPushes = []
        let channels = [keys.changesChannel, keys.catalogChannel, keys.presenceChannel]
        attempt.subscribe(channels) { [weak self] reply in
            guard let self else { return }
            if reply.elements?.first?.text == "subscribe" {
                confirmations += 1
                if confirmations == channels.count { self.readEveryRoom(attempt) }
                return
            }
            self.pushed(reply)
        }
    }

    /// After subscribing (so no change falls between): every room Redis
    /// holds, compared with the view; behind is filled from the history or
    /// resynced, ahead (Redis lost changes) is resynced.
    func readEveryRoom(_ attempt: RedisAttempt) {
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
                if waiting == 0 {
                    self.presence.readFleetMembers(attempt) {
                        self.becomeUp(attempt)
                        self.presence.republishOwnMembers(on: self.commands, epoch: self.epoch)
                    }
                }
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

    func becomeUp(_ attempt: RedisAttempt) {
        guard attempt.isCurrent else { return }
        isUp = true
        backoff.reset()
        if let started = outageStartedAt {
            log.info("backplane: redis at \(settings.endpoint) is back after \(loop.nowMilliseconds &- started) ms; every room caught up")
            outageStartedAt = nil
        }
        let held = heldPushes ?? []
        heldPushes = nil
        for i in stride(from: 0, to: held.count - 1, by: 2) {
            deliverPush(channel: String(decoding: held[i].dropLast(), as: UTF8.self), payload: held[i + 1])
        }
        startHeartbeat(attempt)
        if let completion = startCompletion {
            startCompletion = nil
            completion(nil)
        }
    }

    func startHeartbeat(_ attempt: RedisAttempt) {
        heartbeat?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: Self.heartbeatMilliseconds, repeatMilliseconds: Self.heartbeatMilliseconds) { [weak self, weak attempt] in
            guard let self, let attempt else { return }
            attempt.ask(["GET", self.keys.epoch]) { reply in
                guard let reply else { return }
                if reply.text != self.epoch {
                    self.fault("the fleet's epoch in redis changed (data lost or flushed)")
                }
            }
            self.presence.renew(attempt, epoch: self.epoch)
        }
        heartbeat = timer
    }

    // MARK: - Failures

    /// A connection of the current attempt was lost or could not be made.
    func lost(_ attempt: RedisAttempt, _ reason: String) {
        guard attempt === self.attempt else { return }
        // A refused AUTH reached Redis: it is not "unreachable", and the reason says so.
        goDown(reason.hasPrefix("redis refused") ? reason : "redis at \(settings.endpoint) unreachable: \(reason)")
    }

    /// Something Redis said cannot be trusted: start the connection over,
    /// which re-reads every room.
    func fault(_ reason: String) {
        guard !closed else { return }
        log.warn("backplane: \(reason); reconnecting to resynchronise")
        goDown("resynchronising with redis: \(reason)")
    }

    /// A refusal during the handshake: fatal at start (the daemon exits),
    /// otherwise an outage retried with backoff.
    func refuse(_ reason: String, fatal: Bool = false) {
        if let completion = startCompletion, fatal {
            startCompletion = nil
            close()
            completion(StartError(description: reason))
            return
        }
        goDown(reason)
    }

    func goDown(_ reason: String) {
        guard !closed else { return }
        let wasUp = isUp
        isUp = false
        downReason = reason
        // Given up before anything else, so no answer of the old links acts from here on.
        let old = attempt
        attempt = nil
        heartbeat?.close()
        heartbeat = nil
        heldPushes = nil
        // A read of the members again ends with the attempt; the reconnect reads them anyway.
        presence.connectionLost()
        // Reads of the old connections may never be answered; every room is read again on reconnecting.
        recheckingRooms.removeAll()
        if let completion = startCompletion {
            startCompletion = nil
            old?.retire()
            close()
            completion(StartError(description: "cannot use redis at \(settings.endpoint): \(reason)"))
            return
        }
        if wasUp {
            outages += 1
            outageStartedAt = loop.nowMilliseconds
            log.warn("backplane down: \(reason); refusing room commands (ERR unavailable) and reconnecting")
        }
        // Changes in flight are answered `unavailable` by their reply handlers (nil replies).
        old?.retire()
        for (_, track) in tracks {
            track.parked.removeAll()
            track.filling = false
        }
        // Resumes that waited for a fill are answered now (the store is down: refused).
        for (_, track) in tracks { track.fillEnded(failure: reason) }
        // Changes still queued (none in flight for their room) are refused now, in order.
        for (room, track) in tracks where track.inFlight == 0 && !track.waiting.isEmpty { startRound(room) }
        scheduleReconnect()
    }

    func scheduleReconnect() {
        retryTimer?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: backoff.nextDelay()) { [weak self, timer] in
            timer.close()
            self?.connect()
        }
        retryTimer = timer
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
