import Foundation
import NavSyncClient
import NavSyncCore
import Observation

/// A room's navigation state, shared through `navsyncd` with every other
/// client of the room, as an object views observe: seed 000's environment
/// object, seed 001's coordinator target, seed 002's router.
///
/// ```swift
/// let navigation = SharedNavigation<AppScreen>(room: "demo")
/// try await navigation.start()
/// print(navigation.stack.last)            // what is presented
/// try await navigation.push(.detail(id: "42"))
/// ```
///
/// `stack`, `sheets` and `revision` change on the main actor, only when the
/// daemon reports a change (an event, or a whole state after a reconnect) —
/// never ahead of it. A mutation returns once the daemon acknowledged it
/// *and* the object shows that revision or a later one, so after
/// `try await navigation.push(x)` the stack already has `x` on top (unless
/// another client changed it again in between).
///
/// The connection runs on a libuv loop in a thread of the library's own, so
/// the methods may be called from any task; they hop to the main actor. On
/// Linux, the main actor only runs while the program's main thread serves it:
/// use an `async` `main` (or call `dispatchMain()`), never a blocking loop.
@MainActor @Observable
public final class SharedNavigation<Screen: NavScreen> {
    /// The navigation stack, bottom first; the last entry is what is shown
    /// when no sheet is up. Empty until `start()` returns.
    public private(set) var stack: [Screen] = []
    /// Screens presented modally over the stack, bottom first; the last one,
    /// if any, is what the user looks at.
    public private(set) var sheets: [Screen] = []
    /// The room's revision as the object shows it: it grows by one per
    /// change (and may go back after a memory-only daemon restarted).
    public private(set) var revision: UInt64 = 0
    /// Where the connection stands.
    public private(set) var connection: NavConnectionState = .idle
    /// What this connection's grant lets it do, from `WHOAMI`: `.view`
    /// until `start()` returns; `.control` against a daemon before 1.2.
    public private(set) var role: NavRole = .view
    /// (1.3) When a signed token's grant ends (its `exp`, from `WHOAMI`'s
    /// sixth field); nil for a static token or none. The daemon closes the
    /// connection at that moment plus a 30 s leeway unless `renew(token:)`
    /// gave it a fresh one.
    public private(set) var tokenExpiry: Date?
    /// The room's members in the order they arrived, this object
    /// included (SharedNavigation+Presence). Empty until `start()` returns,
    /// and from a 1.1 daemon.
    public internal(set) var members: [NavMember] = []
    /// This object's own member, once it watches.
    public internal(set) var me: NavMember?

    @ObservationIgnored private let address: String
    @ObservationIgnored private let room: String
    @ObservationIgnored private let token: String?
    @ObservationIgnored private let tlsCA: String?
    /// Said with `NAME`; nil keeps the daemon's name.
    @ObservationIgnored private let name: String?
    /// This connection's member id, from `WHOAMI`.
    @ObservationIgnored var memberID: String?
    @ObservationIgnored private var engine: NavEngine?
    /// Bumped for every engine, so late events of an earlier one are ignored.
    @ObservationIgnored private var engineGeneration = 0
    @ObservationIgnored private var hasState = false
    @ObservationIgnored private var startWaiters: [CheckedContinuation<Void, Error>] = []
    @ObservationIgnored private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    @ObservationIgnored private var lastServerError: ServerError?
    @ObservationIgnored private var endpointCount = 1
    @ObservationIgnored private var nextTicket: Ticket = 0
    /// Mutations sent and not answered yet.
    @ObservationIgnored private var inFlight: [Ticket: CheckedContinuation<UInt64, Error>] = [:]
    /// Mutations the daemon acknowledged whose revision the object does not show yet.
    @ObservationIgnored private var awaitingRevision: [(revision: UInt64, waiter: CheckedContinuation<UInt64, Error>)] = []
    @ObservationIgnored private var streams = ChangeStreams<Screen>()
    /// A member list that came before the first state.
    @ObservationIgnored private var pendingMembers: [Member]?

    /// Makes an idle object; nothing happens until `start()`.
    ///
    /// - Parameters:
    ///   - connect: the daemon, in the forms `navsync --connect` takes:
    ///     `HOST:PORT`, `[IPv6]:PORT`, `tls://HOST:PORT` or `unix:PATH`, or a
    ///     comma-separated list of them tried in turn (daemons sharing a
    ///     backplane), on start and on every reconnect. A `tls://` daemon's
    ///     certificate is always checked against HOST.
    ///   - room: the room to follow; `main` is the one every connection starts in.
    ///   - token: sent with `AUTH` first, for a daemon started with `--token-file`.
    ///   - name: the name the others see in their `members` (`NAME`);
    ///     nil keeps the daemon's (the grant's, else `anon`).
    ///   - tlsCA: a PEM file of certificates trusted for `tls://` addresses
    ///     besides the system's roots (as `navsync --tls-ca`), e.g. for a
    ///     self-signed certificate. One that cannot be read fails every
    ///     `tls://` attempt with the reason.
    public init(connect: String = "127.0.0.1:7878", room: String = Names.defaultRoom, token: String? = nil,
                name: String? = nil, tlsCA: String? = nil) {
        self.address = connect
        self.room = room
        self.token = token
        self.name = name
        self.tlsCA = tlsCA
    }

    isolated deinit {
        engine?.post(.stop)
        streams.finishAll()
    }

    // MARK: Life

    /// Connects, watches the room, and returns once the object shows its
    /// state. Throws `NavSyncError.disconnected` if no address answers (each
    /// is tried once), `.server(code:message:)` if the daemon refuses
    /// (`auth-failed`, `busy`, a bad room name; `bad-reply` for a peer that
    /// does not answer like a navsync daemon), and `.unknownScreen` if the
    /// room shows a screen `Screen` refuses (the object is then `.failed`).
    /// None of these is retried; after a successful start, a lost connection
    /// is retried for ever.
    ///
    /// Calling it again while running does nothing; after a failed start it
    /// tries again; after `stop()` it throws `.notRunning`.
    public func start() async throws {
        switch connection {
        case .connected, .reconnecting:
            return
        case .stopped:
            throw NavSyncError.notRunning
        case .connecting:
            try await withCheckedThrowingContinuation { startWaiters.append($0) }
            return
        case .idle, .failed:
            break
        }
        if let name, !Names.isValidMemberName(name) {
            throw NavSyncError.invalidData("\"\(name)\" is not a name (1 to 64 of A-Z a-z 0-9 _ . @ -)")
        }
        let endpoints: [Endpoint]
        do {
            endpoints = try Endpoint.parseList(address, source: "connect")
        } catch {
            connection = .failed("\(error)")
            throw NavSyncError.disconnected
        }
        endpointCount = endpoints.count
        hasState = false
        lastServerError = nil
        engineGeneration += 1
        let generation = engineGeneration
        var options = SyncClientOptions.stream(room: room, token: token)
        options.askIdentity = true
        options.name = name
        options.presence = true
        let engine = NavEngine(endpoints: endpoints, options: options, tlsCA: tlsCA) { [weak self] events in
            self?.receive(events, from: generation)
        }
        self.engine = engine
        connection = .connecting
        try await withCheckedThrowingContinuation { waiter in
            startWaiters.append(waiter)
            engine.launch()
        }
    }

    /// Says `QUIT`, closes the connection, stops reconnecting, finishes every
    /// `changes` stream, and returns once the library's thread has ended.
    /// Mutations not yet answered throw `.notRunning`; those the daemon
    /// already acknowledged return their revision. Safe to call more than once.
    public func stop() async {
        guard connection != .stopped else { return }
        connection = .stopped
        shutDown(startError: .notRunning)
        guard engine != nil else { return }
        await withCheckedContinuation { stopWaiters.append($0) }
    }

    /// Every stream of `changes` reads the changes that come after it was
    /// made, in revision order: one `NavChange` per revision, or a `.state`
    /// change after a resync (a reconnect the daemon could not continue, a
    /// reader that fell more than `ChangeStreams.bufferLimit` (256) changes
    /// behind). The state `start()` waited for is not in it: read `stack`.
    /// Every stream finishes on `stop()` (or when the object fails); a
    /// stream made after that finishes at once.
    public var changes: AsyncStream<NavChange<Screen>> {
        let stream = streams.add { [weak self] id in
            Task { @MainActor in self?.streams.remove(id) }
        }
        switch connection {
        case .stopped, .failed: streams.finishAll()
        default: break
        }
        return stream
    }

    // MARK: Mutations

    /// The stack becomes just `screen` and no sheet is left (`SELECT`): the
    /// menu picker of seed 000. Returns the revision of the change.
    @discardableResult public func select(_ screen: Screen) async throws -> UInt64 { try await send(.select(screen)) }

    /// Pushes `screen` onto the stack (`PUSH`); sheets stay.
    @discardableResult public func push(_ screen: Screen) async throws -> UInt64 { try await send(.push(screen)) }

    /// Removes the top of the stack (`POP`); `.server(code: "at-root", ...)` on a one-entry stack.
    @discardableResult public func pop() async throws -> UInt64 { try await send(.pop) }

    /// Cuts the stack back to its bottom entry (`ROOT`).
    @discardableResult public func root() async throws -> UInt64 { try await send(.root) }

    /// Replaces the top of the stack by its catalog `next` screen, carrying
    /// `data` (`NEXT`): seed 002's A → B → C. `.server(code: "no-next", ...)`
    /// where the catalog names none; `bad-args` where the next screen
    /// requires data and none was given, or refuses it.
    @discardableResult public func next(data: String? = nil) async throws -> UInt64 { try await send(.next(data: data)) }

    /// Replaces the whole state, a deep link (`OPEN`).
    @discardableResult public func open(stack: [Screen], sheets: [Screen] = []) async throws -> UInt64 {
        try await send(.open(stack: stack, sheets: sheets))
    }

    /// Presents `screen` as a sheet over everything (`PRESENT`).
    @discardableResult public func present(_ screen: Screen) async throws -> UInt64 { try await send(.present(screen)) }

    /// Removes the topmost sheet (`DISMISS`); `.server(code: "no-sheet", ...)` when none is up.
    @discardableResult public func dismiss() async throws -> UInt64 { try await send(.dismiss) }

    /// Makes `change` only if the room is still at `revision` (`IF`): the
    /// way to act on what the user saw without overwriting someone else's
    /// change. Throws `.server(code: "conflict", message: "current=<rev>")` otherwise.
    @discardableResult public func ifAt(_ revision: UInt64, _ change: NavMutation<Screen>) async throws -> UInt64 {
        try await send(change, ifAt: revision)
    }

    private func send(_ mutation: NavMutation<Screen>, ifAt guardRevision: UInt64? = nil) async throws -> UInt64 {
        switch connection {
        case .connected: break
        case .connecting, .reconnecting: throw NavSyncError.disconnected
        case .idle, .stopped, .failed: throw NavSyncError.notRunning
        }
        var request = try WireMapping.request(mutation)
        if let guardRevision { request = .guarded(revision: guardRevision, change: request) }
        return try await self.request(request)
    }

    /// (1.3) A fresh token, e.g. a signed one before the current one expires.
    /// Connected: sent with `AUTH` at once; a good one replaces the grant
    /// (and `tokenExpiry`) without closing anything and is kept for the
    /// reconnects; a refused one throws `.server(code: "auth-failed", ...)`
    /// and the old grant stays. Reconnecting: only kept for the next
    /// attempt. Idle, stopped or failed: `.notRunning`.
    public func renew(token: String) async throws {
        guard !token.isEmpty, !token.contains(where: { $0 == "\n" || $0 == "\r" || $0 == " " || $0 == "\t" }) else {
            throw NavSyncError.invalidData("a token is one word on one line")
        }
        switch connection {
        case .idle, .stopped, .failed:
            throw NavSyncError.notRunning
        case .connecting, .reconnecting:
            engine?.post(.keepToken(token))
        case .connected:
            guard let engine else { throw NavSyncError.notRunning }
            let ticket = nextTicket
            nextTicket += 1
            _ = try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<UInt64, Error>) in
                inFlight[ticket] = waiter
                engine.post(.renew(ticket, token))
            }
        }
    }

    /// Sends a request answered `OK <rev>` and returns that revision once the object shows it.
    func request(_ request: ClientRequest) async throws -> UInt64 {
        switch connection {
        case .connected: break
        case .connecting, .reconnecting: throw NavSyncError.disconnected
        case .idle, .stopped, .failed: throw NavSyncError.notRunning
        }
        guard let engine else { throw NavSyncError.notRunning }
        let ticket = nextTicket
        nextTicket += 1
        return try await withCheckedThrowingContinuation { waiter in
            inFlight[ticket] = waiter
            engine.post(.submit(ticket, request))
        }
    }

    // MARK: What the loop thread reports

    /// Applies a batch of the engine's events, in order. Internal so that
    /// the unit tests can drive the object without a daemon.
    func receive(_ events: [EngineEvent], from generation: Int) {
        guard generation == engineGeneration else { return }
        for event in events {
            switch event {
            case .link(let link): linkChanged(link)
            case .snapshot(let state, _): show(state, op: .state)
            case .event(let state, let op): show(state, op: NavOp(rawValue: op) ?? .state)
            case .reply(let ticket, let reply): answer(ticket, reply)
            case .serverError(let error): refused(error)
            case .identity(let identity):
                role = identity.map { $0.isViewer ? .view : .control } ?? .control
                memberID = identity?.id
                let expiry = identity?.expires.map { Date(timeIntervalSince1970: TimeInterval($0)) }
                if tokenExpiry != expiry { tokenExpiry = expiry }
            case .members(let list): if hasState { membersChanged(list) } else { pendingMembers = list }
            case .finished: engineFinished()
            }
        }
    }

    private var isStarting: Bool { connection == .connecting }

    /// Puts the object where `start()` puts it while it waits, with no
    /// engine, so unit tests can feed `receive` the events a daemon would cause.
    func beginWithoutEngineForTesting() {
        connection = .connecting
    }

    private func linkChanged(_ link: Link) {
        switch link {
        case .idle, .handshaking:
            break
        case .connecting:
            if connection == .connected { connection = .reconnecting }
        case .live:
            if hasState, connection == .reconnecting { connection = .connected }
            // Every greeting is answered, WATCH's included, and no state came: the peer is no navsync daemon.
            if !hasState, isStarting {
                fail(reason: "the daemon at \(address) did not answer WATCH with a state",
                     error: .server(code: "bad-reply", message: "WATCH was not answered with STATE"))
            }
        case .waiting(_, let failures, let reason):
            if isStarting {
                // Each address had its try: the daemon is not there.
                if failures >= endpointCount { fail(reason: "cannot connect to \(address): \(reason)", error: .disconnected) }
            } else if connection == .connected {
                connection = .reconnecting
            }
        case .stopped(let reason):
            switch connection {
            case .connecting:
                let error = lastServerError.map { NavSyncError.server(code: $0.code, message: $0.message) }
                fail(reason: reason, error: error ?? .disconnected)
            case .connected, .reconnecting:
                fail(reason: reason, error: .notRunning)
            case .idle, .failed, .stopped:
                break
            }
        }
    }

    private func refused(_ error: ServerError) {
        lastServerError = error
        // `busy` comes unasked right before the daemon closes: at start, that is a refusal.
        if isStarting, error.code == ErrorCode.busy.rawValue {
            fail(reason: error.line, error: .server(code: error.code, message: error.message))
        }
        // A token or room revoked, or a signed token expired, while running:
        // retrying would be refused again.
        if error.code == ErrorCode.forbidden.rawValue,
           error.message.hasPrefix("token revoked") || error.message.hasPrefix("room revoked")
            || error.message.hasPrefix("token expired") {
            fail(reason: error.line, error: .server(code: error.code, message: error.message))
        }
    }

    /// Shows a state the daemon reported, then tells the readers and the waiting mutations.
    private func show(_ state: RoomState, op: NavOp) {
        guard connection != .stopped, !isFailed else { return }
        let newStack: [Screen], newSheets: [Screen]
        switch (WireMapping.screens(state.stack, as: Screen.self),
                WireMapping.screens(state.sheets, as: Screen.self)) {
        case (.success(let s), .success(let h)):
            newStack = s
            newSheets = h
        case (.failure(let refusal), _), (_, .failure(let refusal)):
            fail(reason: refusal.reason, error: .unknownScreen(refusal.entry.screen))
            return
        }
        // Only what differs is written, so an observer hears one change per revision, not one per property.
        if newStack != stack { stack = newStack }
        if newSheets != sheets { sheets = newSheets }
        if state.revision != revision { revision = state.revision }
        let first = !hasState
        hasState = true
        if isStarting || connection == .reconnecting {
            connection = .connected
        }
        if first {
            // Members listed before the first state are shown with it, so `start()` returns with both.
            if let pending = pendingMembers { membersChanged(pending) }
            pendingMembers = nil
            let waiters = startWaiters
            startWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        } else {
            streams.yield(NavChange(revision: state.revision, op: op, stack: newStack, sheets: newSheets))
        }
        releaseAcknowledged(all: op == .state)
    }

    /// Resumes the mutations whose revision the object now shows. After a
    /// whole-state snapshot every one is released: the daemon's state now
    /// includes their change, or (a memory-only daemon that restarted) never will.
    private func releaseAcknowledged(all: Bool) {
        guard !awaitingRevision.isEmpty else { return }
        var still: [(revision: UInt64, waiter: CheckedContinuation<UInt64, Error>)] = []
        for entry in awaitingRevision {
            if all || entry.revision <= revision {
                entry.waiter.resume(returning: entry.revision)
            } else {
                still.append(entry)
            }
        }
        awaitingRevision = still
    }

    private func answer(_ ticket: Ticket, _ reply: Reply) {
        guard let waiter = inFlight.removeValue(forKey: ticket) else { return }
        switch ReplyMapping.outcome(of: reply, running: connection != .stopped && !isFailed) {
        case .success(let acknowledged):
            if acknowledged <= revision || connection == .stopped || isFailed {
                waiter.resume(returning: acknowledged)
            } else {
                awaitingRevision.append((acknowledged, waiter))
            }
        case .failure(let error):
            waiter.resume(throwing: error)
        }
    }

    private func engineFinished() {
        engine = nil
        // Nothing can answer now; a mutation still out would otherwise wait for ever.
        for waiter in inFlight.values { waiter.resume(throwing: NavSyncError.notRunning) }
        inFlight.removeAll()
        let waiters = stopWaiters
        stopWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    private var isFailed: Bool {
        if case .failed = connection { return true }
        return false
    }

    /// Gives up for good: `.failed(reason)`, the engine told to stop, everyone waiting told why.
    private func fail(reason: String, error: NavSyncError) {
        guard connection != .stopped, !isFailed else { return }
        connection = .failed(reason)
        shutDown(startError: error)
    }

    /// Ends what waits on this object once it is `.stopped` or `.failed`.
    private func shutDown(startError: NavSyncError) {
        let starting = startWaiters
        startWaiters.removeAll()
        for waiter in starting { waiter.resume(throwing: startError) }
        // Acknowledged by the daemon: the change is made, even if this object will not show it.
        for entry in awaitingRevision { entry.waiter.resume(returning: entry.revision) }
        awaitingRevision.removeAll()
        streams.finishAll()
        engine?.post(.stop)
    }
}
