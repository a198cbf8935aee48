import Glibc
import NavSyncTLS
import UVLoop

/// One watcher connection and what it has received so far.
final class Watcher {
    let connection: any ByteStream
    var scanner = LineScanner()
    /// For WebSocket watchers: frames instead of lines.
    var frames = FrameScanner()
    /// For server-sent event watchers: the event names.
    var eventStream = LineScanner.eventStream()
    var events = 0
    var subscribed = false
    /// The highest event target this watcher has already been counted for.
    var countedFor = 0

    init(connection: any ByteStream) {
        self.connection = connection
    }
}

/// Drives one run: connect the actor and N watchers, wait until all are
/// subscribed, then the closed loop and the bursts, then report.
/// Single-threaded: everything runs in loop callbacks on the main thread.
final class Bench {
    enum Phase {
        case connecting, settling, warmup, closedLoop, burst, done
    }

    let loop: EventLoop
    let options: BenchOptions
    let wire: Wire
    private let finish: (Result<RunResult, BenchError>) -> Void

    private var phase = Phase.connecting
    private var actor: StreamConnection?
    /// navsync-tls, navsync-wss, redis-tls: the trusted roots, loaded once for every watcher.
    private var tlsContext: TLSClientContext?
    private var actorScanner = LineScanner()
    private var actorAcknowledgements = 0
    /// The `OK` of the actor's `AUTH` (with `--actor-token`) is no change's.
    private var actorAuthAnswered = false
    private var changesSent = 0
    private var screenIndex = 0

    private var watchers: [Watcher] = []
    private var connectsStarted = 0
    private var connectsInFlight = 0
    private var connectFailures = 0
    private var subscribedCount = 0
    private var connectStartedAt: UInt64 = 0

    /// Every watcher must reach this many events for the current round or burst.
    private var target = 0
    private var reachedCount = 0
    private var roundStartedAt: UInt64 = 0
    private var firstReachedAt: UInt64 = 0
    private var lastReachedAt: UInt64 = 0
    private var roundsDone = 0

    private var firstLatencies: [Double] = []
    private var lastLatencies: [Double] = []
    private var burstDurations: [Double] = []

    private var errors = 0
    private var resyncs = 0
    private var lastProgressAt: UInt64 = 0

    private var cpuMark = CPUMark()
    private var result = RunResult()
    private let timer: LoopTimer
    /// Leader of helper processes (`--helpers`), or a helper's link to its leader (`--leader`).
    private var helperLink: HelperLink?
    private var reporter: HelperReporter?
    private var isHelper: Bool { options.leaderPort != nil }
    /// This process's watchers and every helper's.
    private var totalWatchers: Int { options.watchers + (helperLink?.watchers ?? 0) }

    init(loop: EventLoop, options: BenchOptions, finish: @escaping (Result<RunResult, BenchError>) -> Void) {
        self.loop = loop
        self.options = options
        self.wire = Wire(system: options.system, watcherToken: options.watcherToken, actorToken: options.actorToken)
        self.finish = finish
        self.timer = LoopTimer(loop: loop)
    }

    // MARK: Start and end

    func start() {
        result.system = options.label ?? options.system.rawValue
        result.n = options.watchers
        result.rounds = options.rounds
        result.burstSize = options.burstSize
        result.run = options.runIndex
        result.loadBefore = ProcStats.loadAverage()
        result.openFileLimit = ProcStats.raiseOpenFileLimit()
        result.cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        if result.openFileLimit < options.watchers + 16 {
            fail("open-file limit \(result.openFileLimit) is too low for \(options.watchers) watchers")
            return
        }
        let deadline = LoopTimer(loop: loop)
        deadline.unref()
        deadline.start(afterMilliseconds: options.timeoutSeconds * 1000) { [unowned self] in
            self.fail("timed out after \(self.options.timeoutSeconds) s in phase \(self.phase)"
                + " (subscribed \(self.subscribedCount)/\(self.options.watchers), reached \(self.reachedCount))")
        }
        if let leader = options.leaderPort {
            connectLeader(leader, attempt: 1)
            return
        }
        if options.helpers > 0 {
            do {
                helperLink = try HelperLink(loop: loop, listenPort: options.controlPort, changed: { [unowned self] in
                    self.helpersMoved()
                }, failed: { [unowned self] why in self.fail(why) })
            } catch {
                fail("cannot listen for helpers on port \(options.controlPort): \(error)")
                return
            }
        }
        connectActor(attempt: 1)
    }

    /// A helper: reaches its leader (which may still be starting: retried for 10 s), then connects its watchers.
    private func connectLeader(_ leader: Int, attempt: Int) {
        StreamConnection.connectTCP(loop: loop, host: "127.0.0.1", port: leader) { [unowned self] outcome in
            guard case .success(let connection) = outcome else {
                guard attempt < 100 else {
                    self.fail("cannot reach the leader on port \(leader)")
                    return
                }
                self.timer.start(afterMilliseconds: 100) { [unowned self] in self.connectLeader(leader, attempt: attempt + 1) }
                return
            }
            let reporter = HelperReporter(connection: connection, watchers: self.options.watchers)
            reporter.onTallyRequest = { [unowned self] changes in
                self.changesSent = changes
                self.complete()
            }
            connection.onEnd = { [unowned self] _ in self.fail("the leader went away") }
            self.reporter = reporter
            self.connectStartedAt = ProcStats.nowNanoseconds()
            self.connectMore()
        }
    }

    /// A helper reported: subscriptions, a count reached, or its tally.
    private func helpersMoved() {
        switch phase {
        case .connecting: allSubscribedMaybe()
        case .done: if helperLink?.talliesIn == true { complete() }
        default: checkStepDone()
        }
    }

    private func fail(_ message: String) {
        guard phase != .done else { return }
        phase = .done
        finish(.failure(BenchError(description: message)))
    }

    private func progress(_ message: @autoclosure () -> String) {
        writeProgress("navsync-bench[\(options.system.rawValue) n=\(options.watchers) run \(options.runIndex)]", quiet: options.quiet, message())
    }

    // MARK: Connecting

    private func connectActor(attempt: Int) {
        StreamConnection.connectTCP(loop: loop, host: options.host, port: options.port) { [unowned self] outcome in
            switch outcome {
            case .success(let connection):
                self.adoptActor(connection)
            case .failure(let error):
                // The server may still be starting: retry for 10 s.
                guard attempt < 100 else {
                    self.fail("cannot connect to \(self.options.host):\(self.options.port): \(error)")
                    return
                }
                self.timer.start(afterMilliseconds: 100) { [unowned self] in self.connectActor(attempt: attempt + 1) }
            }
        }
    }

    private func adoptActor(_ connection: StreamConnection) {
        actor = connection
        connection.setNoDelay(true)
        connection.onRead = { [unowned self] bytes in self.actorRead(bytes) }
        connection.onEnd = { [unowned self] end in self.fail("the server closed the actor connection: \(end)") }
        connection.startReading()
        let hello = wire.actorHello
        if !hello.isEmpty { connection.write([hello]) }
        // Give the server a moment to settle after accepting the actor.
        timer.start(afterMilliseconds: 200) { [unowned self] in
            self.result.rssBeforeKiB = ProcStats.statusKilobytes(pids: self.options.pids, field: "VmRSS")
            self.progress("connecting \(self.options.watchers) watchers")
            self.connectStartedAt = ProcStats.nowNanoseconds()
            self.lastProgressAt = self.connectStartedAt
            self.watchers.reserveCapacity(self.options.watchers)
            self.connectMore()
        }
    }

    private func connectMore() {
        while connectsInFlight < options.connectBatch && connectsStarted < options.watchers {
            connectsStarted += 1
            connectsInFlight += 1
            let ports = options.tlsPort.map { [$0] } ?? (options.watcherPorts.isEmpty ? [options.port] : options.watcherPorts)
            let port = ports[connectsStarted % ports.count]
            StreamConnection.connectTCP(loop: loop, host: options.host, port: port) { [unowned self] outcome in
                guard self.phase == .connecting else {
                    self.connectsInFlight -= 1
                    if case .success(let connection) = outcome { connection.close() }
                    return
                }
                if case .success(let connection) = outcome, self.wire.system.watchersOverTLS {
                    self.shakeHands(connection)
                    return
                }
                self.connectsInFlight -= 1
                switch outcome {
                case .success(let connection):
                    self.adoptWatcher(connection)
                case .failure(let error):
                    self.connectFailures += 1
                    if self.connectFailures > max(100, self.options.watchers / 10) {
                        self.fail("too many failed connects (last: \(error))")
                        return
                    }
                    self.connectsStarted -= 1
                }
                self.connectMore()
            }
        }
    }

    /// Watchers inside TLS: the watcher is adopted once its handshake is done (a
    /// connect counts as in flight until then, so the batch paces handshakes).
    private func shakeHands(_ connection: StreamConnection) {
        do {
            let context = try tlsContext ?? TLSClientContext(extraRootsFile: options.tlsCA)
            tlsContext = context
            let tls = TLSStream(transport: connection, engine: try TLSEngine(client: context, serverName: options.host), loop: loop)
            tls.onEstablished = { [unowned self] in
                self.connectsInFlight -= 1
                guard self.phase == .connecting else { return tls.close() }
                self.adoptWatcher(tls)
                self.connectMore()
            }
            tls.onHandshakeFailed = { [unowned self] reason in
                self.connectsInFlight -= 1
                self.fail("a watcher's TLS handshake failed: \(reason)")
            }
            tls.beginHandshake(timeoutMilliseconds: 30_000)
        } catch {
            connectsInFlight -= 1
            connection.close()
            fail("TLS: \(error)")
        }
    }

    private func adoptWatcher(_ connection: any ByteStream) {
        let watcher = Watcher(connection: connection)
        watchers.append(watcher)
        connection.onRead = { [unowned self, unowned watcher] bytes in self.watcherRead(watcher, bytes) }
        connection.onEnd = { [unowned self] end in
            self.fail("the server closed a watcher connection: \(end)")
        }
        connection.startReading()
        connection.write([wire.subscribe])
    }

    private func noteSubscribed() {
        subscribedCount += 1
        if subscribedCount % 1000 == 0 && subscribedCount < options.watchers {
            progress("\(subscribedCount) subscribed")
        }
        guard subscribedCount == options.watchers, phase == .connecting else { return }
        if let reporter {
            reporter.subscribed()
            phase = .closedLoop
            return
        }
        allSubscribedMaybe()
    }

    /// Own watchers and every helper's are subscribed: on to the changes.
    private func allSubscribedMaybe() {
        guard subscribedCount == options.watchers, phase == .connecting,
              (helperLink?.helpersSubscribed ?? 0) == options.helpers else { return }
        let now = ProcStats.nowNanoseconds()
        result.connectSeconds = Double(now - connectStartedAt) / 1e9
        result.connectFailures = connectFailures
        progress("all \(totalWatchers) subscribed in \(format(result.connectSeconds, 2)) s")
        phase = .settling
        timer.start(afterMilliseconds: options.settleMilliseconds) { [unowned self] in
            if !self.options.pids.isEmpty {
                self.result.rssIdleKiB = ProcStats.statusKilobytes(pids: self.options.pids, field: "VmRSS")
                if let before = self.result.rssBeforeKiB, let after = self.result.rssIdleKiB {
                    self.result.rssPerWatcherBytes = Double(after - before) * 1024 / Double(self.totalWatchers)
                }
            }
            self.phase = .warmup
            self.progress("closed loop: \(self.options.warmup) warm-up + \(self.options.rounds) changes")
            self.startRound()
        }
    }

    // MARK: Reading

    private func watcherRead(_ watcher: Watcher, _ bytes: UnsafeRawBufferPointer) {
        let wire = self.wire
        var pings = 0
        func classify(_ b0: UInt8, _ b1: UInt8) {
            switch wire.watcherLine(b0, b1) {
            case .event:
                watcher.events += 1
                reporter?.watcherHolds(watcher.events)
            case .subscribed:
                if watcher.subscribed {
                    resyncs += 1
                } else {
                    watcher.subscribed = true
                    noteSubscribed()
                }
            case .ping:
                pings += 1
            case .error:
                errors += 1
            case .changeAcknowledged, .ignore:
                break
            }
        }
        if wire.system.watchersOnWebSocket {
            watcher.frames.scan(bytes, classify)
        } else if wire.system == .navsyncSSE {
            watcher.eventStream.scan(bytes, classify)
        } else {
            watcher.scanner.scan(bytes, classify)
        }
        if pings > 0 { watcher.connection.write([wire.pong]) }
        if target > 0 && watcher.events >= target && watcher.countedFor < target {
            watcher.countedFor = target
            reachedCount += 1
            if reachedCount == 1 { firstReachedAt = ProcStats.nowNanoseconds() }
            if reachedCount == options.watchers {
                lastReachedAt = reachedCount == 1 ? firstReachedAt : ProcStats.nowNanoseconds()
                checkStepDone()
            }
        }
    }

    private func actorRead(_ bytes: UnsafeRawBufferPointer) {
        let wire = self.wire
        var pings = 0
        var failed = false
        actorScanner.scan(bytes) { b0, b1 in
            switch wire.actorLine(b0, b1) {
            case .changeAcknowledged:
                if wire.actorToken != nil && !actorAuthAnswered {
                    actorAuthAnswered = true
                } else {
                    actorAcknowledgements += 1
                }
            case .ping: pings += 1
            case .error: failed = true
            default: break
            }
        }
        if failed {
            fail("the server answered a change with an error")
            return
        }
        if pings > 0 { actor?.write([wire.pong]) }
        checkStepDone()
    }

    // MARK: Closed loop and bursts

    /// The helpers' processes: their CPU counts as the bench's.
    private var helperPIDs: [Int32] { helperLink?.pids ?? [] }

    private func markCPU() -> CPUMark { CPUMark(pids: options.pids, helpers: helperPIDs) }

    private func nextChange() -> [UInt8] {
        changesSent += 1
        let screen = Wire.screens[screenIndex]
        screenIndex = 1 - screenIndex
        return wire.change(sequence: changesSent, screen: screen)
    }

    private func startRound() {
        if phase == .closedLoop && roundsDone == 0 { cpuMark = markCPU() }
        let bytes = nextChange()
        target = changesSent
        reachedCount = 0
        roundStartedAt = ProcStats.nowNanoseconds()
        actor?.write([bytes])
    }

    private func startBurst() {
        var bytes: [UInt8] = []
        for _ in 0..<options.burstSize { bytes += nextChange() }
        target = changesSent
        reachedCount = 0
        roundStartedAt = ProcStats.nowNanoseconds()
        actor?.write([bytes])
    }

    /// A round or burst is over when every watcher has the target count and the actor has every acknowledgement.
    private func checkStepDone() {
        guard !isHelper, reachedCount == options.watchers,
              actorAcknowledgements >= changesSent * wire.acknowledgementsPerChange else { return }
        if let helperLink {
            let (all, at) = helperLink.reached(target)
            guard all else { return }
            lastReachedAt = max(lastReachedAt, at)
            helperLink.forget(below: target + 1)
        }
        switch phase {
        case .warmup:
            roundsDone += 1
            if roundsDone >= options.warmup {
                phase = .closedLoop
                roundsDone = 0
            }
            startRound()
        case .closedLoop:
            firstLatencies.append(Double(firstReachedAt - roundStartedAt) / 1000)
            lastLatencies.append(Double(lastReachedAt - roundStartedAt) / 1000)
            roundsDone += 1
            if roundsDone % 100 == 0 && roundsDone < options.rounds { progress("\(roundsDone) changes") }
            if roundsDone < options.rounds {
                startRound()
            } else {
                let cpu = cpuMark.elapsed(pids: options.pids, helpers: helperPIDs)
                result.closedFirstMicros = Percentiles(firstLatencies)
                result.closedLastMicros = Percentiles(lastLatencies)
                result.closedBenchCPUMicrosPerChange = cpu.benchNanoseconds / 1000 / Double(options.rounds)
                result.closedDaemonCPUMicrosPerChange = cpu.daemonNanoseconds.map { $0 / 1000 / Double(options.rounds) }
                progress("closed loop: last watcher p50 \(format(result.closedLastMicros.p50 / 1000, 3)) ms, p99 \(format(result.closedLastMicros.p99 / 1000, 3)) ms")
                phase = .burst
                progress("bursts of \(options.burstSize) changes")
                cpuMark = markCPU()
                startBurst()
            }
        case .burst:
            burstDurations.append(Double(lastReachedAt - roundStartedAt) / 1e9)
            let deliveries = burstDurations.count * options.burstSize * totalWatchers
            if burstDurations.count < options.maxBursts
                && burstDurations.reduce(0, +) < options.maxBurstSeconds
                && (burstDurations.count < options.minBursts || deliveries < options.minBurstDeliveries) {
                startBurst()
            } else {
                let cpu = cpuMark.elapsed(pids: options.pids, helpers: helperPIDs)
                let seconds = burstDurations.reduce(0, +)
                result.bursts = burstDurations.count
                result.burstDeliveries = deliveries
                result.burstSeconds = seconds
                result.deliveriesPerSecond = Double(deliveries) / seconds
                result.burstMillis = Percentiles(burstDurations.map { $0 * 1000 })
                result.burstBenchCPUSeconds = cpu.benchNanoseconds / 1e9
                result.benchCPUNanosPerDelivery = cpu.benchNanoseconds / Double(deliveries)
                result.burstDaemonCPUSeconds = cpu.daemonNanoseconds.map { $0 / 1e9 }
                result.daemonCPUNanosPerDelivery = cpu.daemonNanoseconds.map { $0 / Double(deliveries) }
                result.daemonCPUStatNanosPerDelivery = cpu.daemonStatNanoseconds.map { $0 / Double(deliveries) }
                progress("bursts: \(format(result.deliveriesPerSecond / 1e6, 3)) M deliveries/s over \(burstDurations.count) bursts")
                complete()
            }
        case .connecting, .settling, .done:
            break
        }
    }

    private func complete() {
        if let helperLink, phase != .done {
            // The helpers' watchers are counted too before the run ends.
            phase = .done
            helperLink.askTallies(changes: changesSent)
            return
        }
        phase = .done
        if let helperLink, !helperLink.talliesIn { return }
        if !options.pids.isEmpty {
            result.rssPeakKiB = ProcStats.statusKilobytes(pids: options.pids, field: "VmHWM")
            result.rssEndKiB = ProcStats.statusKilobytes(pids: options.pids, field: "VmRSS")
        }
        var lost = 0
        var extra = 0
        for watcher in watchers {
            if watcher.events < changesSent { lost += changesSent - watcher.events }
            if watcher.events > changesSent { extra += watcher.events - changesSent }
        }
        result.n = totalWatchers
        result.changes = changesSent
        result.lostEvents = lost
        result.extraEvents = extra
        result.errors = errors
        result.resyncs = resyncs
        for peer in helperLink?.peers ?? [] {
            guard let tally = peer.tally else { continue }
            result.lostEvents += tally.lost
            result.extraEvents += tally.extra
            result.errors += tally.errors
            result.resyncs += tally.resyncs
        }
        result.loadAfter = ProcStats.loadAverage()
        if let reporter {
            reporter.tally(lost: lost, extra: extra, errors: errors, resyncs: resyncs)
            // A moment for the tally to leave before the process exits.
            timer.start(afterMilliseconds: 100) { [unowned self] in self.finish(.success(self.result)) }
            return
        }
        helperLink?.close()
        finish(.success(result))
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// CPU counters at the start of a measured phase (the server's: summed over
/// its processes; the bench's: this process and its helpers, which share
/// the machine's cores with the server).
struct CPUMark {
    var bench: UInt64 = 0
    var daemon: UInt64?
    var daemonStat: UInt64?

    init() {}

    init(pids: [Int32], helpers: [Int32] = []) {
        bench = ProcStats.ownCPUNanoseconds() + helpers.compactMap(ProcStats.schedCPUNanoseconds).reduce(0, +)
        daemon = Self.sum(pids.map(ProcStats.schedCPUNanoseconds))
        daemonStat = Self.sum(pids.map(ProcStats.statCPUNanoseconds))
    }

    private static func sum(_ values: [UInt64?]) -> UInt64? {
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { return nil }
        return values.reduce(0) { $0 + $1! }
    }

    func elapsed(pids: [Int32], helpers: [Int32] = []) -> (benchNanoseconds: Double, daemonNanoseconds: Double?, daemonStatNanoseconds: Double?) {
        let now = CPUMark(pids: pids, helpers: helpers)
        let daemonNs = zip2(daemon, now.daemon).map { Double($1 &- $0) }
        let statNs = zip2(daemonStat, now.daemonStat).map { Double($1 &- $0) }
        return (Double(now.bench &- bench), daemonNs, statNs)
    }

    private func zip2(_ a: UInt64?, _ b: UInt64?) -> (UInt64, UInt64)? {
        guard let a, let b else { return nil }
        return (a, b)
    }
}

func format(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if have < decimals { text += String(repeating: "0", count: decimals - have) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}
