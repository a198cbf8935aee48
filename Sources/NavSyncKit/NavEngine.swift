import Foundation
import NavSyncClient
import NavSyncCore
import UVLoop

/// The library's IO: a thread of its own running a libuv loop, with the
/// terminal client's `ClientDriver` (and so the same `SyncClient` protocol
/// state machine) on it. The main actor talks to it in two queues:
/// commands in (`post`, woken with a `LoopWakeup`, the loop's one
/// thread-safe entry), events out (`EngineOutbox`, delivered with one hop to
/// the main actor per batch). Nothing else is shared between the threads.
final class NavEngine: Sendable {
    enum Command: Sendable {
        case submit(Ticket, ClientRequest)
        /// (1.3) `AUTH` with a fresh token; once it is answered `OK`, the
        /// token is kept for reconnects and `WHOAMI` asked for its expiry.
        case renew(Ticket, String)
        /// (1.3) Keep this token for the next connection (while reconnecting).
        case keepToken(String)
        /// Say `QUIT`, close the connection, end the thread.
        case stop
    }

    private struct Control {
        var commands: [Command] = []
        /// Set by the loop thread once it runs; nil before and after.
        var wakeup: LoopWakeup?
        /// Set once the loop took `.stop`; later commands are dropped.
        var closed = false
    }

    private let endpoints: [Endpoint]
    private let options: SyncClientOptions
    /// Extra trusted roots for `tls://` addresses (`SharedNavigation`'s `tlsCA`).
    private let tlsCA: String?
    private let control = Guarded(Control())
    private let outbox = Guarded(EngineOutbox())
    private let deliver: @MainActor @Sendable ([EngineEvent]) -> Void

    /// `deliver` runs on the main actor with each batch of events, in order.
    init(endpoints: [Endpoint], options: SyncClientOptions, tlsCA: String? = nil,
         deliver: @escaping @MainActor @Sendable ([EngineEvent]) -> Void) {
        self.endpoints = endpoints
        self.tlsCA = tlsCA
        self.options = options
        self.deliver = deliver
    }

    /// Starts the thread, which connects at once.
    func launch() {
        let thread = Thread { [self] in runLoop() }
        // The loop thread runs shallow callbacks; the default 8 MiB stack is
        // mostly untouched but counts against the address space of every object.
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Hands a command to the loop thread. Safe from any thread.
    func post(_ command: Command) {
        let wakeup = control.withLock { control -> LoopWakeup? in
            guard !control.closed else { return nil }
            control.commands.append(command)
            return control.wakeup
        }
        wakeup?.wake()
    }

    // MARK: The loop thread

    private func runLoop() {
        // Named from inside: Foundation on Linux does not pass a name given before start to the OS,
        // and `top -H`, gdb and the tests find the loop threads by this name.
        Thread.current.name = "NavSyncKit"
        // A write to a socket the daemon reset must fail with EPIPE, not kill
        // the program: libuv writes with write(2), which raises SIGPIPE.
        EventLoop.ignoreSIGPIPE()
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            emit(.link(.stopped(reason: "cannot create an event loop: \(error)")))
            closeControl()
            emit(.finished)
            return
        }
        let side = LoopSide(engine: self, driver: ClientDriver(loop: loop, endpoints: endpoints, options: options,
                                                            tlsCA: tlsCA))
        let wakeup = LoopWakeup(loop: loop) { side.drainCommands() }
        side.wakeup = wakeup
        control.withLock { $0.wakeup = wakeup }
        side.start()
        side.drainCommands()  // anything posted before the wake-up existed
        loop.run()  // returns once `.stop` closed the driver and the wake-up
        loop.shutdown()
        emit(.finished)
    }

    fileprivate func takeCommands() -> [Command] {
        control.withLock { control in
            defer { control.commands.removeAll() }
            return control.commands
        }
    }

    fileprivate func closeControl() {
        control.withLock { control in
            control.closed = true
            control.wakeup = nil
            control.commands.removeAll()
        }
    }

    /// Queues an event for the main actor; the first of a batch schedules the hop.
    fileprivate func emit(_ event: EngineEvent) {
        guard outbox.withLock({ $0.append(event) }) else { return }
        Task { @MainActor [self] in
            let batch = outbox.withLock { $0.takeAll() }
            deliver(batch)
        }
    }
}

/// What lives on the loop thread: the driver and the map from the state
/// machine's request ids to the main actor's tickets. Never leaves the thread.
private final class LoopSide {
    let engine: NavEngine
    let driver: ClientDriver
    var wakeup: LoopWakeup?
    private var tickets: [RequestID: Ticket] = [:]
    /// Renewals in flight: the `AUTH`'s id and its token.
    private var renewals: [RequestID: String] = [:]
    /// The `WHOAMI`s asked after a renewal; their answer is the new identity.
    private var identityRefreshes: Set<RequestID> = []
    /// The ticket being submitted: a reply known at once (`.invalid`, `.lost`)
    /// arrives inside `submit`, before its id is returned.
    private var submitting: Ticket?
    private var answeredWhileSubmitting = false

    init(engine: NavEngine, driver: ClientDriver) {
        self.engine = engine
        self.driver = driver
    }

    func start() {
        driver.onNote = { [unowned self] note in self.noted(note) }
        driver.start()
    }

    func drainCommands() {
        for command in engine.takeCommands() {
            switch command {
            case .submit(let ticket, let request):
                submitting = ticket
                answeredWhileSubmitting = false
                let id = driver.submit(request)
                if !answeredWhileSubmitting { tickets[id] = ticket }
                submitting = nil
            case .renew(let ticket, let token):
                submitting = ticket
                answeredWhileSubmitting = false
                let id = driver.submit(.auth(token: token))
                if !answeredWhileSubmitting {
                    tickets[id] = ticket
                    renewals[id] = token
                }
                submitting = nil
            case .keepToken(let token):
                driver.replaceToken(token)
            case .stop:
                engine.closeControl()
                driver.stop(sayingQuit: true)  // every request still out is answered `.lost` here
                driver.onNote = nil
                wakeup?.close()
                wakeup = nil
                return
            }
        }
    }

    private func noted(_ note: ClientNote) {
        switch note {
        case .link(let link):
            engine.emit(.link(link))
        case .snapshot(let state, let cause):
            engine.emit(.snapshot(state, cause))
        case .event(let state, let op):
            engine.emit(.event(state, op: op))
        case .reply(let id, let reply):
            if identityRefreshes.remove(id) != nil {
                if case .identity(let identity) = reply { engine.emit(.identity(identity)) }
                return
            }
            if let token = renewals.removeValue(forKey: id), case .ok = reply {
                driver.replaceToken(token)
                identityRefreshes.insert(driver.submit(.whoami))
            }
            let ticket: Ticket
            if let known = tickets.removeValue(forKey: id) {
                ticket = known
            } else if let current = submitting {
                ticket = current
                answeredWhileSubmitting = true
            } else {
                return  // a request this side did not make
            }
            engine.emit(.reply(ticket, reply))
        case .serverError(let error):
            engine.emit(.serverError(error))
        case .identity(let identity):
            engine.emit(.identity(identity))
        case .members(let list):
            engine.emit(.members(list))
        case .gap, .catalog, .stats, .continued:
            // The resync that follows a gap is what the object shows; after
            // `CONTINUE` the replayed events come as ordinary events.
            break
        }
    }
}
