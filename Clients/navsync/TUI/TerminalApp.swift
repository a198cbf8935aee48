import Glibc
import NavSyncClient
import NavSyncCore
import UVLoop

/// The full-screen client: one libuv loop carries the daemon connection,
/// the keyboard (a poll on the terminal), SIGWINCH, quit signals and a
/// quarter-second clock for countdowns. Whatever changes marks the frame
/// dirty; it is painted once, just before the loop next sleeps.
/// Single-threaded: everything runs on the loop thread.
final class TerminalApp {
    private let loop: EventLoop
    private let terminal: Terminal
    private let driver: ClientDriver
    private let painter: Painter
    private let room: String
    private let hasToken: Bool
    private var ui = UIState()
    private var dirty = true
    private var lastLoss: String?
    private var keyboard: FDPoll?
    private var signals: [SignalWatcher] = []
    private var clock: LoopTimer?
    private var paintHook: LoopHook?
    private var quitting = false
    /// Set while detached: what this client shows instead of the room.
    private var detached: DetachedView?

    /// Why the full-screen client cannot run on this terminal, or nil. A
    /// terminal that cannot move the cursor (`TERM=dumb`, or no `TERM`) would
    /// show one stale frame and never repaint.
    static func unsuitableTerminal(_ environment: [String: String]) -> String? {
        let term = environment["TERM"] ?? ""
        guard term.isEmpty || term == "dumb" else { return nil }
        let shown = term.isEmpty ? "TERM is not set" : "TERM=dumb"
        return "the full-screen client needs a terminal that can move the cursor (\(shown)); "
            + "try 'navsync watch' to follow the room, or 'navsync raw' to type commands"
    }

    /// Runs until the user quits; returns the exit status.
    static func run(endpoints: [Endpoint], room: String?, token: String?, tlsCA: String?, environment: [String: String],
                    naming: PresenceNaming = PresenceNaming()) -> Int32 {
        guard let loop = ClientLoop.start() else { return 1 }
        let terminal: Terminal
        do {
            terminal = try Terminal(environment: environment)
        } catch {
            Output.complain(error.description)
            return 1
        }
        let app = TerminalApp(loop: loop, terminal: terminal, endpoints: endpoints, room: room, token: token,
                              tlsCA: tlsCA, naming: naming)
        do {
            try app.start()
        } catch {
            app.tearDown()
            terminal.end()
            Output.complain("cannot watch the terminal: \(error)")
            return 1
        }
        loop.run()
        app.tearDown()
        terminal.end()
        loop.shutdown()
        return 0
    }

    private init(loop: EventLoop, terminal: Terminal, endpoints: [Endpoint], room: String?, token: String?,
                 tlsCA: String?, naming: PresenceNaming) {
        self.loop = loop
        self.terminal = terminal
        self.painter = Painter(terminal: terminal)
        self.room = room ?? Names.defaultRoom
        self.hasToken = token != nil
        var options = naming.applied(to: .interactive(room: room, token: token))
        options.presence = true
        self.driver = ClientDriver(loop: loop, endpoints: endpoints, options: options, tlsCA: tlsCA)
    }

    private func start() throws(UVError) {
        driver.onNote = { [unowned self] note in self.noted(note) }
        keyboard = try FDPoll(loop: loop, fd: terminal.inputFD) { [unowned self] in self.keysReady() }
        signals.append(try SignalWatcher(loop: loop, signal: SIGWINCH) { [unowned self] in
            self.terminal.adoptKernelSize()
            self.dirty = true
        })
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signals.append(try SignalWatcher(loop: loop, signal: number) { [unowned self] in self.quit() })
        }
        // A resize between ncurses reading the size (in `Terminal.init`) and
        // the watcher above taking SIGWINCH over was signalled to nobody: the
        // client would draw for the old width until the next resize (a tmux
        // split right after the pane starts did exactly that). Asking the
        // kernel once now, with the watcher in place, leaves no gap.
        terminal.adoptKernelSize()
        let clock = LoopTimer(loop: loop)
        clock.start(afterMilliseconds: 250, repeatMilliseconds: 250) { [unowned self] in self.clockTicked() }
        self.clock = clock
        paintHook = loop.beforeBlocking { [unowned self] in self.paintIfDirty() }
        driver.start()
        paintIfDirty()
    }

    /// Closes every handle this app opened, so `loop.run()` can return.
    /// Every way out is on purpose (`q`, a signal, the terminal gone), so a
    /// live connection is told `QUIT` first: the daemon frees the watcher
    /// at once instead of finding out later.
    private func tearDown() {
        driver.stop(sayingQuit: true)
        keyboard?.close()
        keyboard = nil
        for watcher in signals { watcher.close() }
        signals.removeAll()
        clock?.close()
        clock = nil
        paintHook?.close()
        paintHook = nil
    }

    private func quit() {
        guard !quitting else { return }
        quitting = true
        tearDown()
        loop.stop()
    }

    // MARK: Events

    private func noted(_ note: ClientNote) {
        let now = driver.now
        switch note {
        case .reply(_, .error(let error)), .serverError(let error):
            ui.post(error.line, isError: true, now: now)
        case .reply(_, .lost(let reason)):
            ui.post("not sent: \(reason)", isError: true, now: now)
        case .reply(_, .invalid(let problem)):
            ui.post(problem, isError: true, now: now)
        case .link(.waiting(_, _, let reason)), .link(.stopped(let reason)):
            lastLoss = reason
        case .link(.live):
            lastLoss = nil
            // A new connection is a new member, following: say where this client looks again.
            if let detached { driver.submit(.look(at: detached.state.route)) }
        case .identity(let identity):
            // A daemon before 1.2 (no WHOAMI) lets a connection do all its token does.
            ui.isViewer = identity?.isViewer ?? false
            if ui.isViewer, !ui.isDetached, case .menu = ui.mode { ui.mode = .browsing }
            if ui.isViewer, !ui.isDetached, case .prompt = ui.mode { ui.mode = .browsing }
        default:
            break
        }
        dirty = true
    }

    private func keysReady() {
        let keys = terminal.readKeys()
        if keys.isEmpty && terminalHungUp() {
            quit()
            return
        }
        for key in keys {
            let intent = ui.handle(key, catalog: driver.client.catalog, stack: driver.client.snapshot?.stack,
                                   now: driver.now)
            dirty = true
            switch intent {
            case .nothing:
                break
            case .send(let request) where detached != nil && request.verb.row.isMutation:
                browseDetached(request)
            case .send(let request):
                driver.submit(request)
            case .detach:
                guard detached == nil, let room = driver.client.snapshot else { break }
                detached = DetachedView(from: room)
                ui.isDetached = true
                driver.submit(.look(at: room.route))
                ui.post("detached: your keys move only this screen; f follows the room again", isError: false,
                        now: driver.now)
            case .follow:
                guard detached != nil else { break }
                detached = nil
                ui.isDetached = false
                // A viewer's menu or prompt was browsing on its own: following, it may not steer.
                if ui.isViewer, case .menu = ui.mode { ui.mode = .browsing }
                if ui.isViewer, case .prompt = ui.mode { ui.mode = .browsing }
                driver.submit(.look(at: nil))
                ui.post("following the room again", isError: false, now: driver.now)
            case .repaintEverything:
                terminal.repaintEverything()
            case .quit:
                quit()
                return
            }
        }
    }

    /// Detached, a change moves only what this client shows, and the
    /// daemon hears where it looks now.
    private func browseDetached(_ request: ClientRequest) {
        guard var view = detached else { return }
        do {
            guard try view.apply(request, catalog: driver.client.catalog) else { return }
            detached = view
            driver.submit(.look(at: view.state.route))
        } catch {
            ui.post("ERR \(error.code.rawValue) \(error.message)", isError: true, now: driver.now)
        }
    }

    /// A readable terminal that yields no key may have gone away (the
    /// window closed); then polling would report it readable forever.
    private func terminalHungUp() -> Bool {
        var probe = pollfd(fd: terminal.inputFD, events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, 0) > 0 else { return false }
        return probe.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    private func clockTicked() {
        let now = driver.now
        if ui.expireNotice(now: now) { dirty = true }
        switch driver.client.link {
        case .waiting, .connecting:
            dirty = true  // the retry countdown moves
        default:
            break
        }
    }

    private func paintIfDirty() {
        guard dirty, !quitting else { return }
        dirty = false
        let client = driver.client
        var frame = Frame(endpoint: driver.endpoint, room: room, link: client.link,
                          snapshot: detached?.state ?? client.snapshot,
                          catalog: client.catalog, watchers: client.watchers, ui: ui, lastLoss: lastLoss,
                          hasConnected: client.hasConnected, lastResume: client.lastResume,
                          now: driver.now)
        frame.presence = PresenceFrame(members: client.members, memberID: client.memberID,
                                       memberCount: client.memberCount,
                                       roomWhileDetached: detached == nil ? nil : client.snapshot)
        frame.identity = client.identity
        frame.hasToken = hasToken
        painter.paint(frame)
    }
}
