import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// What the connection asks of the store it serves.
/// All methods are called on the loop thread.
protocol BackplaneConnectionOwner: AnyObject {
    /// The hub: its catalog is compared with the fleet's, and adopts the fleet's.
    var hub: RoomStoreDelegate? { get }
    /// Redis holds another epoch than before (its data was lost or replaced).
    func connectionFoundNewEpoch()
    /// Subscribed (so no change falls between): the owner reads what it
    /// keeps (every room, the fleet's members) through `attempt`, then calls `up`.
    func connectionSubscribed(_ attempt: RedisAttempt, up: @escaping () -> Void)
    /// Up: every held push was handed over.
    func connectionBecameUp()
    /// One message of the fleet's channels, in the order Redis sent them.
    func connectionReceived(channel: String, payload: [UInt8])
    /// Once a heartbeat while up, after the epoch was asked.
    func connectionHeartbeat(_ attempt: RedisAttempt)
    /// The connection was lost or given up; the attempt is retired and a
    /// reconnect is scheduled.
    func connectionWentDown(because reason: String)
}

/// The backplane's connection to Redis, as one state machine: connect
/// (a `RedisAttempt`, its two links) → handshake (version, functions) →
/// epoch → catalog → subscribe → the owner reads its rooms → up →
/// heartbeat; and down → backoff → reconnect, from any step. Refusals at
/// start are fatal (the daemon exits); later ones are outages. Pushes that
/// arrive before the owner is up are held and handed over in order.
///
/// Its fields are its own; the store reads `isUp`, `epoch`, `downReason`
/// and the current `attempt`, and is told of each step through
/// `BackplaneConnectionOwner`. It never touches a room.
/// Must be used on the loop thread only.
final class BackplaneConnection {
    weak var owner: BackplaneConnectionOwner?
    private let loop: EventLoop
    private let keys: BackplaneKeys
    private let endpoint: RedisEndpoint
    private let replaceCatalog: Bool
    private let log: Logger
    private let makeLink: RedisAttempt.Connector

    /// The current try at Redis (nil between a loss and the next try).
    private(set) var attempt: RedisAttempt?
    private(set) var isUp = false
    private(set) var downReason: String
    /// The fleet's epoch in Redis, once agreed.
    private(set) var epoch: String?
    /// Times the connection was lost while up (`backplane_outages`).
    private(set) var outages: UInt64 = 0
    private var retryTimer: LoopTimer?
    private var heartbeat: LoopTimer?
    private var backoff = ReconnectBackoff()
    private var outageStartedAt: UInt64?
    private var startCompletion: ((RedisRoomStore.StartError?) -> Void)?
    private var closed = false
    /// Pushes that arrived while the owner was still reading after a connect.
    private var heldPushes: [[UInt8]]? = nil

    init(loop: EventLoop, keys: BackplaneKeys, endpoint: RedisEndpoint, replaceCatalog: Bool, log: Logger,
         connector: @escaping RedisAttempt.Connector) {
        self.loop = loop
        self.keys = keys
        self.endpoint = endpoint
        self.replaceCatalog = replaceCatalog
        self.log = log
        self.makeLink = connector
        downReason = "connecting to redis at \(endpoint)"
    }

    /// Where change rounds and history reads are sent (see `RedisAttempt`).
    var commands: (any RedisLink)? { attempt?.commandLink }

    /// Connects; `completion` gets nil once up, or why the daemon must not start.
    func start(completion: @escaping (RedisRoomStore.StartError?) -> Void) {
        startCompletion = completion
        connect()
    }

    /// Closes both links and the timers (before the loop shuts down).
    func close() {
        closed = true
        retryTimer?.close()
        heartbeat?.close()
        let old = attempt
        attempt = nil
        old?.retire()
    }

    private func connect() {
        guard !closed else { return }
        attempt = RedisAttempt(connector: makeLink,
                               onBothReady: { [weak self] attempt in self?.handshake(attempt) },
                               onLost: { [weak self] attempt, reason in self?.lost(attempt, reason) })
    }

    /// Checks the server, loads the function, agrees on the epoch and the
    /// catalog, subscribes, reads every room; then the store is up.
    private func handshake(_ attempt: RedisAttempt) {
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

    private func agreeOnEpoch(_ attempt: RedisAttempt) {
        var generator = SystemRandomNumberGenerator()
        let fresh = String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
        attempt.ask(["SET", keys.epoch, fresh, "NX"]) { _ in }
        attempt.ask(["GET", keys.epoch]) { [weak self] reply in
            guard let self, let value = reply?.text else { return }
            if let known = self.epoch, known != value {
                self.log.warn("backplane: redis holds a new epoch (its data was lost or replaced): every room is resynced")
                self.owner?.connectionFoundNewEpoch()
            }
            self.epoch = value
            self.agreeOnCatalog(attempt)
        }
    }

    private func agreeOnCatalog(_ attempt: RedisAttempt) {
        guard let delegate = owner?.hub else { return }
        let ours = delegate.changeRules.catalog
        let starting = startCompletion != nil
        attempt.ask([Array("SET".utf8), Array(keys.catalog.utf8), CatalogFile.encode(ours), Array("NX".utf8)]) { _ in }
        attempt.ask(["GET", keys.catalog]) { [weak self] reply in
            guard let self, case .string(let json) = reply else { return }
            let fleet: Catalog
            do {
                fleet = try CatalogFile.decode(json)
            } catch {
                guard starting && self.replaceCatalog else {
                    self.refuse("the fleet's catalog in redis (\(self.keys.catalog)) is not valid: \(error)", fatal: starting)
                    return
                }
                fleet = ours
            }
            if let difference = ours.firstDifference(from: fleet) {
                if starting && self.replaceCatalog && fleet.initial != ours.initial {
                    // --replace-catalog works as a SIGHUP would, and a reload may not move `initial`:
                    // rooms never changed would show another screen at the same revision.
                    self.refuse("--replace-catalog cannot change the fleet's initial screen (\(difference))", fatal: true)
                    return
                } else if starting && self.replaceCatalog {
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

    private func subscribe(_ attempt: RedisAttempt) {
        var confirmations = 0
        heldPushes = []
        let channels = [keys.changesChannel, keys.catalogChannel, keys.presenceChannel]
        attempt.subscribe(channels) { [weak self] reply in
            guard let self else { return }
            if reply.elements?.first?.text == "subscribe" {
                confirmations += 1
                if confirmations == channels.count {
                    self.owner?.connectionSubscribed(attempt) { [weak self] in self?.becomeUp(attempt) }
                }
                return
            }
            self.pushed(reply)
        }
    }

    /// A push of the subscription: held while the rooms are read after a
    /// connect, handed to the owner once up.
    private func pushed(_ reply: RedisReply) {
        guard let parts = reply.elements, parts.count == 3, parts[0].text == "message",
              let channel = parts[1].text, case .string(let payload) = parts[2] else { return }
        // A presence message too large to read is dropped now, not held.
        let tooLarge = channel == keys.presenceChannel && payload.count > PresenceBounds.maxMessageBytes
        if heldPushes != nil && !tooLarge {
            heldPushes?.append(contentsOf: [Array(channel.utf8) + [0]] + [payload])
            return
        }
        owner?.connectionReceived(channel: channel, payload: payload)
    }

    private func becomeUp(_ attempt: RedisAttempt) {
        guard attempt.isCurrent else { return }
        isUp = true
        backoff.reset()
        if let started = outageStartedAt {
            log.info("backplane: redis at \(endpoint) is back after \(loop.nowMilliseconds &- started) ms; every room caught up")
            outageStartedAt = nil
        }
        let held = heldPushes ?? []
        heldPushes = nil
        for i in stride(from: 0, to: held.count - 1, by: 2) {
            owner?.connectionReceived(channel: String(decoding: held[i].dropLast(), as: UTF8.self), payload: held[i + 1])
        }
        startHeartbeat(attempt)
        owner?.connectionBecameUp()
        if let completion = startCompletion {
            startCompletion = nil
            completion(nil)
        }
    }

    private func startHeartbeat(_ attempt: RedisAttempt) {
        heartbeat?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: RedisRoomStore.heartbeatMilliseconds, repeatMilliseconds: RedisRoomStore.heartbeatMilliseconds) { [weak self, weak attempt] in
            guard let self, let attempt else { return }
            attempt.ask(["GET", self.keys.epoch]) { [weak self] reply in
                guard let self else { return }
                guard let reply else { return }
                if reply.text != self.epoch {
                    self.fault("the fleet's epoch in redis changed (data lost or flushed)")
                }
            }
            self.owner?.connectionHeartbeat(attempt)
        }
        heartbeat = timer
    }

    // MARK: - Failures

    /// A connection of the current attempt was lost or could not be made.
    private func lost(_ attempt: RedisAttempt, _ reason: String) {
        guard attempt === self.attempt else { return }
        // A refused AUTH reached Redis: it is not "unreachable", and the reason says so.
        goDown(reason.hasPrefix("redis refused") ? reason : "redis at \(endpoint) unreachable: \(reason)")
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
            completion(RedisRoomStore.StartError(description: reason))
            return
        }
        goDown(reason)
    }

    private func goDown(_ reason: String) {
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
        if let completion = startCompletion {
            startCompletion = nil
            old?.retire()
            close()
            completion(RedisRoomStore.StartError(description: "cannot use redis at \(endpoint): \(reason)"))
            return
        }
        if wasUp {
            outages += 1
            outageStartedAt = loop.nowMilliseconds
            log.warn("backplane down: \(reason); refusing room commands (ERR unavailable) and reconnecting")
        }
        // Changes in flight are answered `unavailable` by their reply handlers (nil replies).
        old?.retire()
        owner?.connectionWentDown(because: reason)
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        retryTimer?.close()
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: backoff.nextDelay()) { [weak self, timer] in
            timer.close()
            self?.connect()
        }
        retryTimer = timer
    }

}
