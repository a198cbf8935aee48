import NavSyncCore

/// The client side of the line protocol as a state machine with no IO: the
/// owner feeds it what happened (connected, a line arrived, time passed) and
/// carries out the actions it returns. That is what lets its rules be tested
/// line by line without a socket:
///
/// - Replies come in the order of the commands, so each non-event line
///   answers the oldest unanswered command. `EVENT` lines are never replies.
///   A `STATE` is a reply only when the oldest command expects one; any other
///   `STATE` is a resync. Were a resync to arrive just before a `GET`'s reply,
///   the two would be swapped, which is harmless: both are whole snapshots.
/// - While watching, an event must carry the next revision. An older one is
///   ignored; a newer one is applied (it carries the whole stack) and a fresh
///   `WATCH` is sent to resynchronise.
/// - A snapshot always replaces the local copy, even with a lower revision:
///   a daemon restarted without a state file starts again at 0.
/// - A reconnect resumes the watch with `WATCH <rev>`, `rev` being the last
///   revision applied: `CONTINUE` keeps the snapshot and the missed changes
///   arrive as ordinary events; a `STATE` replaces it, as on a first watch.
///   A daemon that does not know the form (protocol 1.0) refuses it, and the
///   client falls back to a plain `WATCH`.
/// - A dead peer is noticed by the heartbeat: the oldest unanswered command
///   (a `PING` at the latest) may not be older than the reply timeout.
/// - Lost connections are retried after `ReconnectBackoff`'s jittered wait.
///
/// Times are loop milliseconds passed in by the owner.
public struct SyncClient {
    enum Purpose: Equatable {
        case auth, join, catalog, messages, heartbeat, stats
        /// `SCREENS` and `MESSAGES` again after the daemon said `CATALOG`.
        case catalogReload, messagesReload
        case watch(resync: Bool)
        /// `WATCH <after>` on a reconnect, to continue from the last revision applied.
        case resume(after: UInt64)
        case user(RequestID)
        /// The greeting's `NAME`, `WHOAMI` and `PRESENCE`, and a `NAME` sent after `WHOAMI`.
        case name, whoami, presence, lateName

        var isGreeting: Bool {
            switch self {
            case .auth, .join, .catalog, .messages, .watch(resync: false), .resume, .name, .whoami: return true
            default: return false
            }
        }
    }

    struct Pending: Equatable {
        var purpose: Purpose
        var expectation: ClientRequest.Expectation
        var sentAt: UInt64
        /// A caller's request, kept so it can be sent again when the
        /// greeting was throttled and the daemon did not run it.
        var request: ClientRequest?
    }

    public private(set) var options: SyncClientOptions
    public private(set) var link: Link = .idle
    /// The room as last seen: from `WATCH`, events and resyncs. Nil until the first snapshot.
    public private(set) var snapshot: RoomState?
    /// From `SCREENS`; empty until it arrives.
    public private(set) var catalog: [CatalogEntry] = []
    /// Watchers of this room, from the last `STATS`.
    public private(set) var watchers: Int?
    /// This connection's identity and grant, from the last `WHOAMI`.
    public private(set) var identity: Identity?
    /// How the latest reconnect's watch began; nil until a reconnect has resumed.
    public private(set) var lastResume: ResumeOutcome?
    /// Members of this room (fleet-wide), from the last `STATS`: what
    /// a client shows as "how many are here"; nil from a 1.1 daemon.
    public private(set) var memberCount: Int?
    /// The room's members, in arrival order, while `options.presence`.
    public internal(set) var members: [Member] = []
    /// This connection's member id, from `WHOAMI`.
    public internal(set) var memberID: String?
    /// An unasked listing (`PRESENCE` ... `END`) being read.
    var presenceListing: [Member]?
    /// `PRESENCE` was answered on this connection: `MEMBER`/`GONE` lines are live.
    var followsPresence = false
    /// `STATS` may be asked on this connection: only a grant for every
    /// room (`*`) may read it, so a client that asks `WHOAMI` waits for the
    /// answer, and a refusal (a grant narrowed by a reload) stops the polling
    /// quietly: the figures are the client's bookkeeping, not the user's request.
    private var statsAllowed = false
    /// Said after the reason when a connection ends before the daemon
    /// sent a single line: set by the driver for a plain TCP address, where
    /// the likely cause is a TLS port (it waits for a handshake and never
    /// answers a line).
    public var silenceHint: String?
    /// A line came on this connection.
    private var heardLine = false

    var pending: [Pending] = []
    /// Item lines collected for the oldest command, a listing.
    private var listing: [String] = []
    /// Requests submitted before the connection was up.
    private var queued: [(RequestID, ClientRequest)] = []
    /// True once any connection has been made; before that, requests wait
    /// in `queued` and `retryFirstConnection` decides whether to keep trying.
    public private(set) var hasConnected = false
    private var nextID: RequestID = 1
    private var failures = 0
    private var greetingsLeft = 0
    private var watching = false
    private var resyncInFlight = false
    private var connectStartedAt: UInt64 = 0
    private var lastHeartbeatAt: UInt64 = 0
    /// Why the daemon is about to close this connection, if it said so.
    private var farewell: String?
    /// The daemon ended this connection's access (`ERR forbidden token
    /// expired` or `revoked`): the same token would be refused again, so
    /// the connection's end stops the client instead of retrying.
    private var accessEnded = false
    /// `AUTH` was answered `throttled`: the connection's other answers
    /// are read, then it waits until then (loop milliseconds) and connects
    /// again, with the error line as the reason.
    private var throttled: (until: UInt64, reason: String)?
    private var random: SplitMix64

    public init(options: SyncClientOptions, seed: UInt64) {
        self.options = options
        self.random = SplitMix64(seed: seed)
    }

    // MARK: Inputs

    /// Begins the first connect attempt.
    public mutating func start(now: UInt64) -> [ClientAction] {
        guard link == .idle else { return [] }
        return beginConnect(now: now)
    }

    /// Ends the client for good; unanswered requests are reported lost.
    public mutating func stop(now: UInt64, reason: String = "closed") -> [ClientAction] {
        if case .stopped = link { return [] }
        var actions = failOutstanding(.lost(reason))
        resetConnection()
        link = .stopped(reason: reason)
        actions += [.disconnect, .note(.link(link))]
        return actions
    }

    /// Submits a request. Before the first connection it waits; while
    /// disconnected it is answered `.lost` at once rather than replayed later,
    /// so a change is never made twice behind the user's back.
    /// (1.3) The token the next connections authenticate with (a renewed
    /// signed token); the open connection keeps its grant until the caller
    /// sends `AUTH` itself.
    public mutating func replaceToken(_ token: String?) { options.token = token }

    public mutating func submit(_ request: ClientRequest, now: UInt64) -> (RequestID, [ClientAction]) {
        let id = nextID
        nextID += 1
        if let problem = request.problem { return (id, [.note(.reply(id, .invalid(problem)))]) }
        switch link {
        case .idle, .connecting:
            queued.append((id, request))
            return (id, [])
        case .handshaking, .live:
            pending.append(Pending(purpose: .user(id), expectation: request.expectation, sentAt: now, request: request))
            return (id, [.send(request.line + "\n")])
        case .waiting(_, _, let reason), .stopped(let reason):
            return (id, [.note(.reply(id, .lost("not connected: \(reason)")))])
        }
    }

    /// The connect attempt completed: send the greeting and anything queued, in one batch.
    public mutating func connectSucceeded(now: UInt64) -> [ClientAction] {
        guard case .connecting = link else { return [] }
        var lines: [String] = []
        func ask(_ line: String, _ purpose: Purpose, _ expectation: ClientRequest.Expectation,
                 _ request: ClientRequest? = nil) {
            lines.append(line)
            pending.append(Pending(purpose: purpose, expectation: expectation, sentAt: now, request: request))
        }
        if let token = options.token { ask("AUTH \(token)", .auth, .ok) }
        if asksWhoami { ask(Verb.whoami.line(), .whoami, .identity) }
        if let room = options.room, room != Names.defaultRoom { ask("JOIN \(room)", .join, .state) }
        for (line, purpose, expectation) in presenceGreeting() { ask(line, purpose, expectation) }
        if options.loadCatalog {
            ask(Verb.screens.line(), .catalog, .listing)
            ask(Verb.messages.line(), .messages, .listing)
        }
        if options.watch {
            if let held = snapshot {
                ask(Verb.watch.line(String(held.revision)), .resume(after: held.revision), .state)
            } else {
                ask(Verb.watch.line(), .watch(resync: false), .state)
            }
        }
        greetingsLeft = pending.filter(\.purpose.isGreeting).count
        // After WATCH, so the listing shows this connection itself; not a greeting (a 1.1 daemon refuses it).
        if options.presence { ask(Verb.presence.line(), .presence, .listing) }
        // Without WHOAMI the grant is unknown: ask, and a refusal turns the polling off.
        statsAllowed = options.pollStats && !asksWhoami
        if statsAllowed { ask("STATS", .stats, .listing) }
        for (id, request) in queued {
            ask(request.line, .user(id), request.expectation, request)
        }
        queued.removeAll()
        hasConnected = true
        lastHeartbeatAt = now
        link = greetingsLeft == 0 ? .live : .handshaking
        if link == .live { failures = 0 }
        var actions: [ClientAction] = [.note(.link(link))]
        if !lines.isEmpty { actions.append(.send(lines.map { $0 + "\n" }.joined())) }
        return actions
    }

    public mutating func connectFailed(_ reason: String, now: UInt64) -> [ClientAction] {
        guard case .connecting = link else { return [] }
        return lose(reason, now: now)
    }

    /// The connection ended (end of stream or an error).
    public mutating func connectionEnded(_ reason: String, now: UInt64) -> [ClientAction] {
        switch link {
        case .handshaking, .live: return lose(farewell ?? hinted(reason), now: now)
        default: return []
        }
    }

    /// The reason, with `silenceHint` when the daemon never sent a line.
    private func hinted(_ reason: String) -> String {
        guard !heardLine, let silenceHint else { return reason }
        return "\(reason) — \(silenceHint)"
    }

    /// One line from the daemon, without its `\n`.
    public mutating func received(_ line: String, now: UInt64) -> [ClientAction] {
        switch link {
        case .handshaking, .live: break
        default: return []
        }
        heardLine = true
        let parsed = ServerLine.parse(line)
        if case .event(let revision, let op, let route) = parsed {
            return applyEvent(revision: revision, op: op, route: route, now: now)
        }
        // A reloaded catalog is announced unasked; it answers nothing.
        if case .catalogChanged = parsed { return catalogChanged(now: now) }
        // Live presence lines and unasked listings answer nothing.
        if let actions = presenceLine(parsed) { return actions }
        // `busy` is sent unasked, right before the daemon closes; it answers nothing.
        if case .error(let error) = parsed, error.code == ErrorCode.busy.rawValue { return unasked(parsed) }
        guard let head = pending.first else { return unasked(parsed) }
        if case .continued(let revision) = parsed, case .resume(let after) = head.purpose {
            return continued(after: after, answered: revision, now: now)
        }

        if head.expectation == .listing {
            switch parsed {
            case .end:
                let items = listing
                listing = []
                return complete(.listing(items), now: now)
            case .error(let error) where listing.isEmpty:
                return complete(.error(error), now: now)
            case .state where watching:
                return unasked(parsed)
            case .bye:
                return unasked(parsed)
            default:
                listing.append(line)
                return []
            }
        }

        switch (parsed, head.expectation) {
        case (.error(let error), _):
            return complete(.error(error), now: now)
        case (.ok(let revision), .ok):
            return complete(.ok(revision: revision), now: now)
        case (.pong(let text), .pong):
            return complete(.pong(text), now: now)
        case (.you(let identity), .identity):
            return complete(.identity(identity), now: now)
        case (.state(let revision, let route), .state):
            switch Route.decode(route) {
            case .success(let navigation): return complete(.state(RoomState(navigation, revision: revision)), now: now)
            case .failure: return complete(.unexpected(line), now: now)
            }
        case (.state, _) where watching, (.bye, _):
            return unasked(parsed)
        default:
            return complete(.unexpected(line), now: now)
        }
    }

    /// Time passed: retry, time out, or send a heartbeat.
    public mutating func tick(now: UInt64) -> [ClientAction] {
        switch link {
        case .waiting(let retryAt, _, _) where now >= retryAt:
            return beginConnect(now: now)
        case .connecting where now &- connectStartedAt >= options.connectTimeoutMilliseconds:
            return lose("no connection after \(seconds(options.connectTimeoutMilliseconds))", now: now)
        case .handshaking, .live:
            if let oldest = pending.first, now &- oldest.sentAt >= options.replyTimeoutMilliseconds {
                return lose(hinted("no reply for \(seconds(options.replyTimeoutMilliseconds))"), now: now)
            }
            if let due = heartbeatDue, now >= due {
                lastHeartbeatAt = now
                var lines = "PING\n"
                pending.append(Pending(purpose: .heartbeat, expectation: .pong, sentAt: now))
                if statsAllowed {
                    lines += "STATS\n"
                    pending.append(Pending(purpose: .stats, expectation: .listing, sentAt: now))
                }
                return [.send(lines)]
            }
            return []
        default:
            return []
        }
    }

    /// When `tick` next has something to do (loop milliseconds), or nil.
    public var nextWakeUp: UInt64? {
        switch link {
        case .waiting(let retryAt, _, _):
            return retryAt
        case .connecting:
            return connectStartedAt + options.connectTimeoutMilliseconds
        case .handshaking, .live:
            let timeout = pending.first.map { $0.sentAt + options.replyTimeoutMilliseconds }
            switch (timeout, heartbeatDue) {
            case let (a?, b?): return min(a, b)
            case let (a, b): return a ?? b
            }
        case .idle, .stopped:
            return nil
        }
    }

    /// Due only when live and no heartbeat is still unanswered.
    private var heartbeatDue: UInt64? {
        guard link == .live, options.heartbeatMilliseconds > 0,
              !pending.contains(where: { $0.purpose == .heartbeat }) else { return nil }
        return lastHeartbeatAt + options.heartbeatMilliseconds
    }

    // MARK: Rules

    private mutating func beginConnect(now: UInt64) -> [ClientAction] {
        resetConnection()
        link = .connecting(failures: failures)
        connectStartedAt = now
        return [.note(.link(link)), .connect]
    }

    private mutating func resetConnection() {
        pending.removeAll()
        listing.removeAll()
        greetingsLeft = 0
        watching = false
        presenceListing = nil
        followsPresence = false
        resyncInFlight = false
        farewell = nil
        throttled = nil
        statsAllowed = false
        heardLine = false
    }

    private mutating func lose(_ reason: String, now: UInt64) -> [ClientAction] {
        var actions: [ClientAction] = [.disconnect]
        let retry = !accessEnded && (hasConnected ? options.reconnect : options.retryFirstConnection)
        // Requests that never left wait for the first connection that will come.
        let unsent = retry && !hasConnected ? queued : []
        if !unsent.isEmpty { queued.removeAll() }
        actions += failOutstanding(.lost(reason))
        queued = unsent
        resetConnection()
        if retry {
            failures += 1
            let wait = options.backoff.delay(failures: failures, using: &random)
            link = .waiting(retryAt: now + wait, failures: failures, reason: reason)
        } else {
            link = .stopped(reason: reason)
        }
        actions.append(.note(.link(link)))
        return actions
    }

    /// After a throttled `AUTH`: the lines sent behind it are
    /// answered as the anonymous role allows. A caller's request refused for
    /// want of a token waits for the next connection (nothing ran); any
    /// other answer is the caller's. Once all are in, the connection is
    /// closed and the next attempt waits as long as the daemon said.
    private mutating func drainThrottled(_ head: Pending?, _ reply: Reply?) -> [ClientAction] {
        var actions: [ClientAction] = []
        if let head, case .user(let id) = head.purpose, let reply {
            if case .error(let error) = reply, let request = head.request,
               error.code == ErrorCode.authRequired.rawValue || error.code == ErrorCode.forbidden.rawValue {
                queued.append((id, request))
            } else {
                actions.append(.note(.reply(id, reply)))
            }
        }
        guard pending.isEmpty, let (until, reason) = throttled else { return actions }
        resetConnection()
        link = .waiting(retryAt: until, failures: failures, reason: reason)
        return actions + [.disconnect, .note(.link(link))]
    }

    /// Answers every request that will now never be answered.
    private mutating func failOutstanding(_ reply: Reply) -> [ClientAction] {
        var actions: [ClientAction] = []
        for entry in pending {
            if case .user(let id) = entry.purpose { actions.append(.note(.reply(id, reply))) }
        }
        for (id, _) in queued { actions.append(.note(.reply(id, reply))) }
        pending.removeAll()
        queued.removeAll()
        return actions
    }

    /// The oldest command has its answer.
    private mutating func complete(_ reply: Reply, now: UInt64) -> [ClientAction] {
        let head = pending.removeFirst()
        var actions: [ClientAction] = []
        // Answered either way: a later gap may ask again.
        if head.purpose == .watch(resync: true) { resyncInFlight = false }
        if throttled != nil { return drainThrottled(head, reply) }
        switch (head.purpose, reply) {
        case (.user(let id), _):
            actions.append(.note(.reply(id, reply)))
        case (.auth, .error(let error)) where error.throttledRetrySeconds != nil:
            // Transient: the token was not even looked at. Wait as told, then try again.
            throttled = (now + UInt64(error.throttledRetrySeconds ?? 1) * 1000, error.line)
            return [.note(.serverError(error))] + drainThrottled(nil, nil)
        case (.auth, .error(let error)) where error.code == ErrorCode.badArgs.rawValue:
            // A token for a daemon that wants none: the daemon says so, and everything else works.
            actions.append(.note(.serverError(error)))
        case (.messages, .error), (.messagesReload, .error):
            // A protocol 1.0 daemon has no MESSAGES: the catalog simply has none.
            actions.append(.note(.catalog(catalog)))
        case (.name, .error), (.presence, .error), (.lateName, .error):
            // A 1.1 daemon knows no presence: everything else works without it.
            break
        case (.whoami, .identity(let identity)):
            self.identity = identity
            actions.append(.note(.identity(identity)))
            actions += identified(identity, now: now)
            // A room-scoped grant takes its counts from presence instead.
            if identity.rooms == "*" { actions += startStats(now: now) }
        case (.whoami, _):
            // A daemon before 1.2 has no WHOAMI: it allows everything a token
            // does, and knows no presence; not a refused greeting.
            self.identity = nil
            actions.append(.note(.identity(nil)))
            actions += startStats(now: now)
        case (.stats, .error):
            // Not the user's error: stop asking on this connection.
            statsAllowed = false
            watchers = nil
            memberCount = nil
        case (.presence, .listing(let lines)):
            actions += presenceAnswered(lines)
        case (.resume, .error):
            // A protocol 1.0 daemon refuses `WATCH <rev>`: watch afresh instead,
            // which is a resync. The plain WATCH takes the resume's place among
            // the greetings.
            lastResume = .resynced
            pending.append(Pending(purpose: .watch(resync: false), expectation: .state, sentAt: now))
            return [.send(Verb.watch.line() + "\n")]
        case (let purpose, .error(let error)) where purpose.isGreeting:
            // A refused greeting (wrong token, no token, a bad room) would be refused
            // again on every reconnect: stop and say why.
            actions += failOutstanding(.error(error))
            resetConnection()
            link = .stopped(reason: error.line)
            return actions + [.disconnect, .note(.serverError(error)), .note(.link(link))]
        case (.catalog, .listing(let lines)), (.catalogReload, .listing(let lines)):
            // Reported once MESSAGES has answered too, so the catalog is shown whole.
            catalog = lines.compactMap(CatalogEntry.init(screenLine:))
        case (.messages, .listing(let lines)), (.messagesReload, .listing(let lines)):
            var messages: [String: String] = [:]
            for line in lines {
                if let item = CatalogEntry.message(fromLine: line) { messages[item.screen] = item.message }
            }
            for index in catalog.indices { catalog[index].message = messages[catalog[index].name] }
            actions.append(.note(.catalog(catalog)))
        case (.watch(let resync), .state(let state)):
            watching = true
            snapshot = state
            actions.append(.note(.snapshot(state, resync ? .resync : .connected)))
        case (.resume, .state(let state)):
            watching = true
            snapshot = state
            lastResume = .resynced
            actions.append(.note(.snapshot(state, .resync)))
        case (.stats, .listing(let lines)):
            var figures: [String: String] = [:]
            for line in lines {
                let (verb, rest) = ServerLine.split(Substring(line))
                let (key, value) = ServerLine.split(rest)
                if verb == "STAT", !key.isEmpty { figures[String(key)] = String(value) }
            }
            watchers = figures["watchers"].flatMap { Int($0) }
            memberCount = figures["members"].flatMap { Int($0) }
            actions.append(.note(.stats(figures)))
        case (_, .error(let error)):
            actions.append(.note(.serverError(error)))
        default:
            break  // auth ok, join's state, pong: nothing to report
        }
        if head.purpose.isGreeting { actions += greetingAnswered(now: now) }
        return actions
    }

    /// The grant may read `STATS`: ask now, and with every heartbeat.
    private mutating func startStats(now: UInt64) -> [ClientAction] {
        guard options.pollStats, !statsAllowed else { return [] }
        statsAllowed = true
        pending.append(Pending(purpose: .stats, expectation: .listing, sentAt: now))
        return [.send("STATS\n")]
    }

    /// One more greeting has its answer; the last one makes the link live.
    private mutating func greetingAnswered(now: UInt64) -> [ClientAction] {
        greetingsLeft -= 1
        guard greetingsLeft == 0, link == .handshaking else { return [] }
        link = .live
        failures = 0
        lastHeartbeatAt = now
        return [.note(.link(link))]
    }

    /// `CONTINUE` answered the reconnect's `WATCH <after>`: the snapshot held
    /// stays, and the events that follow bring it up to date.
    private mutating func continued(after: UInt64, answered revision: UInt64, now: UInt64) -> [ClientAction] {
        pending.removeFirst()
        watching = true
        lastResume = .continued
        var actions: [ClientAction] = [.note(.continued(after: revision))]
        // Continuing from another revision than the one asked for would leave
        // the snapshot wrong: ask for a whole one instead.
        if revision != after { actions += requestResync(now: now) }
        return actions + greetingAnswered(now: now)
    }

    /// A line that answers no command: a resync `STATE`, `BYE`, or an `ERR` such as `busy`.
    private mutating func unasked(_ line: ServerLine) -> [ClientAction] {
        switch line {
        case .state(let revision, let route) where watching:
            guard case .success(let navigation) = Route.decode(route) else { return [] }
            let state = RoomState(navigation, revision: revision)
            snapshot = state
            return [.note(.snapshot(state, .resync))]
        case .bye:
            farewell = "the daemon shut down"
            return []
        case .error(let error):
            if error.code == ErrorCode.busy.rawValue { farewell = "the daemon is busy: \(error.message)" }
            if error.code == ErrorCode.forbidden.rawValue,
               error.message.hasPrefix("token expired") || error.message.hasPrefix("token revoked") {
                farewell = error.line
                accessEnded = true
            }
            return [.note(.serverError(error))]
        default:
            return []
        }
    }

    /// Asks for the new catalog and its messages, when this client keeps one.
    private mutating func catalogChanged(now: UInt64) -> [ClientAction] {
        guard options.loadCatalog else { return [] }
        pending.append(Pending(purpose: .catalogReload, expectation: .listing, sentAt: now))
        pending.append(Pending(purpose: .messagesReload, expectation: .listing, sentAt: now))
        return [.send(Verb.screens.line() + "\n" + Verb.messages.line() + "\n")]
    }

    private mutating func applyEvent(revision: UInt64, op: String, route: String, now: UInt64) -> [ClientAction] {
        guard watching, let current = snapshot, revision > current.revision else { return [] }
        guard case .success(let navigation) = Route.decode(route) else { return requestResync(now: now) }
        let state = RoomState(navigation, revision: revision)
        snapshot = state
        var actions: [ClientAction] = [.note(.event(state, op: op))]
        if revision != current.revision + 1 {
            actions.append(.note(.gap(expected: current.revision + 1, received: revision)))
            actions += requestResync(now: now)
        }
        return actions
    }

    private mutating func requestResync(now: UInt64) -> [ClientAction] {
        guard !resyncInFlight else { return [] }
        resyncInFlight = true
        pending.append(Pending(purpose: .watch(resync: true), expectation: .state, sentAt: now))
        return [.send(Verb.watch.line() + "\n")]
    }

    private func seconds(_ milliseconds: UInt64) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(Double(milliseconds) / 1000)s"
    }
}
