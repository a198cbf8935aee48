import GNUFlags
import Glibc
import UVLoop

/// `navsync-bench redis-restart`: how long watchers of a fleet wait to be
/// live again after the fleet's Redis is killed (`kill -9`) and restarted
/// on the same port and AOF directory, with writers busy all along.
///
/// The bench starts Redis (AOF, `appendfsync` as asked) and the daemons
/// itself, because the restart has to be timed from the moment the new
/// Redis answers `PING`, and every process it starts it stops by its PID.
/// One run: a writer connection per room (room r on daemon r mod D) makes
/// one change at a time, continuously, and retries what is refused
/// `ERR unavailable`; N watchers (watcher i on daemon i mod D, room i mod
/// R) `JOIN` and `WATCH`. After the warm-up Redis is killed and started
/// again at once. Measured from Redis answering `PING` again ("ready"):
/// the first acknowledged change (any daemon, and per daemon); and per
/// watcher, the moment it holds the first revision of its room that was
/// acknowledged after ready. A watcher that holds it has everything
/// acknowledged before the kill too, since its stream is checked gap-free
/// (an `EVENT` not one past the last is a gap; a `STATE` is a resync).
/// Lost: per room, revisions acknowledged before ready that the first
/// revision acknowledged after ready does not lie beyond.
final class RedisRestartBench {
    struct Options {
        var daemon = ".build/release/navsyncd"
        var redisServer = "/usr/bin/redis-server"
        var host = "127.0.0.1"
        var redisPort = 6379
        var daemonPorts: [Int] = []
        /// Redis's working directory (its AOF) and the processes' logs.
        var directory = ""
        var fsync = "always"
        var watchers = 1000
        var rooms = 100
        var warmupMilliseconds: UInt64 = 2000
        /// How long the streams are still checked after every watcher caught up.
        var settleMilliseconds: UInt64 = 500
        var connectBatch = 200
        var timeoutSeconds: UInt64 = 120
        var quiet = false
    }

    struct Result: Codable {
        var watchers = 0
        var rooms = 0
        var daemons = 0
        var fsync = ""
        var warmupMs = 0.0
        var acknowledgedBeforeKill = 0
        /// Size of Redis's AOF files when it was killed (what the restart loads).
        var aofBytes = 0
        /// From `kill -9` until the restarted Redis answered `PING` (AOF loaded).
        var redisDownMs = 0.0
        /// From ready until the first change was acknowledged, on any daemon.
        var firstAcknowledgedMs = 0.0
        /// The same per daemon, in the order of the ports.
        var firstAcknowledgedPerDaemonMs: [Double] = []
        /// From ready until each room's first acknowledged change (ms, over the rooms).
        var roomFirstAcknowledgedMs = Percentiles()
        /// From ready until each watcher held its room's first revision acknowledged after ready (ms).
        var catchUpMs = Percentiles()
        /// The longest catch-up among each daemon's watchers, in the order of the ports.
        var catchUpMaxPerDaemonMs: [Double] = []
        var caughtUp = 0
        /// Changes refused `ERR unavailable` (each retried).
        var unavailable = 0
        /// `STATE` lines after a watcher's first two (its JOIN's and its WATCH's).
        var resyncs = 0
        var watchersResynced = 0
        var gaps = 0
        var lostRevisions = 0
        var acknowledgedAfterReady = 0
        /// Over the catch-up (ready until the last watcher caught up): the lines
        /// the watchers read, and CPU time of the bench, of each daemon and of
        /// Redis, to tell a catch-up bound by a busy process from one spent waiting.
        var linesToWatchersDuringCatchUp = 0
        var benchCPUDuringCatchUpMs = 0.0
        var daemonsCPUDuringCatchUpMs: [Double] = []
        var redisCPUDuringCatchUpMs = 0.0
        var load = ""
    }

    /// The connection that changes one room, one change at a time.
    final class RoomWriter {
        let room: Int
        let daemon: Int
        let retry: LoopTimer
        var connection: StreamConnection?
        var lines = LineCollector()
        var joined = false
        var sequence = 0
        /// The newest revision acknowledged, and that value when Redis was ready again.
        var acknowledged: UInt64 = 0
        var acknowledgedAtReady: UInt64 = 0
        var firstAfterReady: UInt64?
        var firstAfterReadyAt: UInt64?

        init(room: Int, daemon: Int, loop: EventLoop) {
            self.room = room
            self.daemon = daemon
            self.retry = LoopTimer(loop: loop)
        }
    }

    final class Watcher {
        let room: Int
        let daemon: Int
        var connection: StreamConnection?
        var lines = LineCollector()
        var revision: UInt64 = 0
        var statesSeen = 0
        /// Revisions held after ready with when, kept only until the room's target is known.
        var arrivals: [(revision: UInt64, at: UInt64)] = []
        var caughtUpAt: UInt64?
        var resynced = false

        init(room: Int, daemon: Int) {
            self.room = room
            self.daemon = daemon
        }
    }

    enum Phase: Comparable { case starting, connecting, warmingUp, down, catchingUp, settling, done }

    let loop: EventLoop
    let options: Options
    private let finish: (Swift.Result<Result, BenchError>) -> Void
    private let redis: DaemonProcess
    private let daemons: [DaemonProcess]
    private var writers: [RoomWriter] = []
    private var watchers: [Watcher] = []
    private var watchersOfRoom: [[Watcher]] = []
    private var phase = Phase.starting
    private var result = Result()
    private let probeTimer: LoopTimer
    private let phaseTimer: LoopTimer
    private var joinedWriters = 0
    private var watchingCount = 0
    private var nextToConnect = 0
    private var connectsInFlight = 0
    private var acknowledgedTotal = 0
    private var killedAt: UInt64 = 0
    private var readyAt: UInt64 = 0
    private var firstAcknowledgedAt: [UInt64?]
    /// CPU (ns) of the bench, each daemon and Redis when Redis was ready again.
    private var cpuAtReady: [UInt64] = []

    init(loop: EventLoop, options: Options, finish: @escaping (Swift.Result<Result, BenchError>) -> Void) {
        self.loop = loop
        self.options = options
        self.finish = finish
        redis = DaemonProcess(
            executable: options.redisServer,
            arguments: ["--port", "\(options.redisPort)", "--bind", options.host, "--dir", options.directory,
                        "--appendonly", "yes", "--appendfsync", options.fsync, "--save", "", "--protected-mode", "no",
                        "--daemonize", "no"],
            logPath: "\(options.directory)/redis.log")
        // Info level: the backplane's outage lines ("down", "back after") are what the logs are kept for.
        daemons = options.daemonPorts.map { port in
            DaemonProcess(
                executable: options.daemon,
                arguments: ["--listen", "\(options.host):\(port)", "--backplane", "redis://\(options.host):\(options.redisPort)",
                            "--max-clients", "\(options.watchers + options.rooms + 100)", "--log-level", "info"],
                logPath: "\(options.directory)/daemon-\(port).log")
        }
        probeTimer = LoopTimer(loop: loop)
        phaseTimer = LoopTimer(loop: loop)
        firstAcknowledgedAt = Array(repeating: nil, count: options.daemonPorts.count)
    }

    private func progress(_ message: @autoclosure () -> String) {
        writeProgress("navsync-bench redis-restart[n=\(options.watchers)]", quiet: options.quiet, message())
    }

    func start() {
        result.watchers = options.watchers
        result.rooms = options.rooms
        result.daemons = daemons.count
        result.fsync = options.fsync
        result.warmupMs = Double(options.warmupMilliseconds)
        guard ProcStats.raiseOpenFileLimit() >= options.watchers + options.rooms + 64 else {
            fail("open-file limit too low for \(options.watchers) watchers")
            return
        }
        let deadline = LoopTimer(loop: loop)
        deadline.unref()
        deadline.start(afterMilliseconds: options.timeoutSeconds * 1000) { [unowned self] in
            self.fail("timed out in phase \(self.phase): \(self.watchingCount) watching, \(self.result.caughtUp) caught up"
                + " of \(self.options.watchers), \(self.joinedWriters) writers joined")
        }
        do {
            try redis.start()
        } catch {
            fail(error.description)
            return
        }
        whenRedisAnswers { [unowned self] in
            do throws(BenchError) {
                for daemon in self.daemons { try daemon.start() }
            } catch {
                self.fail(error.description)
                return
            }
            self.progress("redis and \(self.daemons.count) daemons started; \(self.options.rooms) writers joining")
            self.phase = .connecting
            self.writers = (0..<self.options.rooms).map { RoomWriter(room: $0, daemon: $0 % self.daemons.count, loop: self.loop) }
            for writer in self.writers { self.connect(writer) }
        }
    }

    // MARK: Redis

    /// Runs `ready` once Redis answers `PING` with `PONG` (not `LOADING`),
    /// probing every millisecond: its moment is what the catch-up is timed from.
    private func whenRedisAnswers(_ ready: @escaping () -> Void) {
        func probe() {
            StreamConnection.connectTCP(loop: loop, host: options.host, port: options.redisPort) { [unowned self] outcome in
                guard case .success(let connection) = outcome else {
                    self.probeTimer.start(afterMilliseconds: 1) { probe() }
                    return
                }
                var answered = false
                connection.onRead = { [unowned self] bytes in
                    guard !answered else { return }
                    answered = true
                    let pong = bytes.starts(with: Array("+PONG".utf8))
                    connection.onEnd = nil
                    connection.close()
                    if pong { ready() } else { self.probeTimer.start(afterMilliseconds: 1) { probe() } }
                }
                connection.onEnd = { [unowned self] _ in
                    guard !answered else { return }
                    answered = true
                    connection.close()
                    self.probeTimer.start(afterMilliseconds: 1) { probe() }
                }
                connection.startReading()
                connection.write([Array("PING\r\n".utf8)])
            }
        }
        probe()
    }

    private func killAndRestartRedis() {
        phase = .down
        result.acknowledgedBeforeKill = acknowledgedTotal
        progress("\(acknowledgedTotal) changes acknowledged; kill -9 redis and start it again")
        killedAt = ProcStats.nowNanoseconds()
        redis.stop(signal: SIGKILL)
        result.aofBytes = Self.bytesOfFiles(in: "\(options.directory)/appendonlydir")
        do {
            try redis.start()
        } catch {
            fail(error.description)
            return
        }
        whenRedisAnswers { [unowned self] in self.redisReady() }
    }

    private func redisReady() {
        readyAt = ProcStats.nowNanoseconds()
        result.redisDownMs = milliseconds(from: killedAt, to: readyAt)
        phase = .catchingUp
        for writer in writers { writer.acknowledgedAtReady = writer.acknowledged }
        cpuAtReady = cpuNow()
        progress("redis answers again \(format(result.redisDownMs, 1)) ms after the kill; waiting for every watcher")
    }

    static func bytesOfFiles(in directory: String) -> Int {
        guard let dir = opendir(directory) else { return 0 }
        defer { closedir(dir) }
        var total = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var info = stat()
            if stat("\(directory)/\(name)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG { total += Int(info.st_size) }
        }
        return total
    }

    // MARK: Writers

    private func connect(_ writer: RoomWriter) {
        ChangeDriver.connectRetrying(loop: loop, host: options.host, port: options.daemonPorts[writer.daemon],
                                     timer: writer.retry, withinSeconds: 30) { [unowned self, unowned writer] outcome in
            switch outcome {
            case .failure(let error):
                self.fail("writer of room \(writer.room): \(error)")
            case .success(let connection):
                writer.connection = connection
                connection.setNoDelay(true)
                connection.onRead = { [unowned self, unowned writer] bytes in self.read(bytes, writer) }
                connection.onEnd = { [unowned self, unowned writer] end in
                    self.fail("daemon \(self.options.daemonPorts[writer.daemon]) closed the writer of room \(writer.room): \(end)")
                }
                connection.startReading()
                self.send(writer)
            }
        }
    }

    /// The writer's next request: its `JOIN` until one is answered, then a change.
    private func send(_ writer: RoomWriter) {
        guard phase < .done, let connection = writer.connection else { return }
        if !writer.joined {
            connection.write([Array("JOIN \(ChangeDriver.roomName(writer.room))\n".utf8)])
            return
        }
        writer.sequence += 1
        connection.write([Array("OPEN \(ChangeDriver.route(room: writer.room, sequence: writer.sequence))\n".utf8)])
    }

    private func read(_ bytes: UnsafeRawBufferPointer, _ writer: RoomWriter) {
        var failure: String?
        writer.lines.scan(bytes) { line in
            switch ServerReply(line: line) {
            case .state where !writer.joined:
                writer.joined = true
                joinedWriters += 1
                if joinedWriters == writers.count {
                    progress("every writer busy; connecting \(options.watchers) watchers")
                    connectMoreWatchers()
                }
                send(writer)
            case .ok(let revision):
                acknowledged(revision, by: writer)
                send(writer)
            case .error where line.starts(with: Self.unavailable):
                result.unavailable += 1
                writer.retry.start(afterMilliseconds: 2) { [unowned self, unowned writer] in self.send(writer) }
            default:
                failure = "the writer of room \(writer.room) got \(String(decoding: line, as: UTF8.self))"
            }
        }
        if let failure { fail(failure) }
    }

    /// The refusal a writer retries: its error code, not the word anywhere in the line.
    static let unavailable = Array("ERR unavailable".utf8)

    private func acknowledged(_ revision: UInt64, by writer: RoomWriter) {
        acknowledgedTotal += 1
        writer.acknowledged = revision
        guard phase >= .catchingUp, phase < .done else { return }
        result.acknowledgedAfterReady += 1
        let now = ProcStats.nowNanoseconds()
        if firstAcknowledgedAt[writer.daemon] == nil { firstAcknowledgedAt[writer.daemon] = now }
        guard writer.firstAfterReady == nil else { return }
        writer.firstAfterReady = revision
        writer.firstAfterReadyAt = now
        // Acknowledged before ready and not beyond the first revision after it: gone.
        if revision <= writer.acknowledgedAtReady {
            result.lostRevisions += Int(writer.acknowledgedAtReady - revision + 1)
        }
        for watcher in watchersOfRoom[writer.room] where watcher.caughtUpAt == nil {
            if let arrival = watcher.arrivals.first(where: { $0.revision >= revision }) { caughtUp(watcher, at: arrival.at) }
            watcher.arrivals = []
        }
    }

    // MARK: Watchers

    private func connectMoreWatchers() {
        if watchers.isEmpty {
            watchersOfRoom = Array(repeating: [], count: options.rooms)
            watchers = (0..<options.watchers).map { Watcher(room: $0 % options.rooms, daemon: $0 % daemons.count) }
            for watcher in watchers { watchersOfRoom[watcher.room].append(watcher) }
        }
        while connectsInFlight < options.connectBatch && nextToConnect < watchers.count {
            let watcher = watchers[nextToConnect]
            nextToConnect += 1
            connectsInFlight += 1
            StreamConnection.connectTCP(loop: loop, host: options.host, port: options.daemonPorts[watcher.daemon]) { [unowned self] outcome in
                self.connectsInFlight -= 1
                switch outcome {
                case .success(let connection):
                    watcher.connection = connection
                    connection.onRead = { [unowned self, unowned watcher] bytes in self.read(bytes, watcher) }
                    connection.onEnd = { [unowned self, unowned watcher] end in
                        self.fail("daemon \(self.options.daemonPorts[watcher.daemon]) closed a watcher: \(end)")
                    }
                    connection.startReading()
                    connection.write([Array("JOIN \(ChangeDriver.roomName(watcher.room))\nWATCH\n".utf8)])
                case .failure(let error):
                    self.fail("a watcher could not connect: \(error)")
                    return
                }
                self.connectMoreWatchers()
            }
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer, _ watcher: Watcher) {
        var failure: String?
        var linesRead = 0
        watcher.lines.scan(bytes) { line in
            linesRead += 1
            switch ServerReply(line: line) {
            case .state(let revision):
                watcher.statesSeen += 1
                // The first answers JOIN, the second WATCH; any later one is a resync.
                if watcher.statesSeen > 2 {
                    result.resyncs += 1
                    if !watcher.resynced { result.watchersResynced += 1 }
                    watcher.resynced = true
                }
                watcher.revision = revision
                if watcher.statesSeen == 2 {
                    watchingCount += 1
                    if watchingCount == watchers.count { everyoneWatching() }
                }
            case .event(let revision):
                if revision != watcher.revision + 1 { result.gaps += 1 }
                watcher.revision = revision
            case .other:
                break
            default:
                failure = "a watcher of room \(watcher.room) got \(String(decoding: line, as: UTF8.self))"
            }
        }
        if let failure {
            fail(failure)
            return
        }
        if phase == .catchingUp { result.linesToWatchersDuringCatchUp += linesRead }
        guard phase >= .catchingUp, phase < .done, watcher.caughtUpAt == nil else { return }
        let now = ProcStats.nowNanoseconds()
        if let target = writers[watcher.room].firstAfterReady {
            if watcher.revision >= target { caughtUp(watcher, at: now) }
        } else {
            watcher.arrivals.append((watcher.revision, now))
        }
    }

    /// CPU time so far of the bench, each daemon and Redis (ns; 0 when unreadable).
    private func cpuNow() -> [UInt64] {
        [ProcStats.ownCPUNanoseconds()] + (daemons + [redis]).map { ProcStats.schedCPUNanoseconds(pid: $0.pid) ?? 0 }
    }

    private func caughtUp(_ watcher: Watcher, at time: UInt64) {
        watcher.caughtUpAt = time
        result.caughtUp += 1
        guard result.caughtUp == watchers.count else { return }
        let spent = zip(cpuNow(), cpuAtReady).map { Double($0 &- $1) / 1e6 }
        result.benchCPUDuringCatchUpMs = spent[0]
        result.daemonsCPUDuringCatchUpMs = Array(spent[1...daemons.count])
        result.redisCPUDuringCatchUpMs = spent[daemons.count + 1]
        phase = .settling
        progress("every watcher caught up; checking the streams \(options.settleMilliseconds) ms more")
        phaseTimer.start(afterMilliseconds: options.settleMilliseconds) { [unowned self] in self.complete() }
    }

    private func everyoneWatching() {
        phase = .warmingUp
        progress("\(watchers.count) watchers watching; warming up \(options.warmupMilliseconds) ms")
        phaseTimer.start(afterMilliseconds: options.warmupMilliseconds) { [unowned self] in self.killAndRestartRedis() }
    }

    // MARK: End

    private func milliseconds(from start: UInt64, to end: UInt64) -> Double { Double(end &- start) / 1e6 }

    private func complete() {
        let times = firstAcknowledgedAt.map { $0.map { milliseconds(from: readyAt, to: $0) } ?? -1 }
        result.firstAcknowledgedPerDaemonMs = times
        result.firstAcknowledgedMs = times.filter { $0 >= 0 }.min() ?? -1
        let waits = watchers.map { watcher in (watcher.daemon, watcher.caughtUpAt.map { milliseconds(from: readyAt, to: $0) }) }
        result.catchUpMs = Percentiles(waits.compactMap(\.1))
        result.roomFirstAcknowledgedMs = Percentiles(writers.compactMap { $0.firstAfterReadyAt.map { milliseconds(from: readyAt, to: $0) } })
        result.catchUpMaxPerDaemonMs = daemons.indices.map { daemon in
            waits.filter { $0.0 == daemon }.compactMap(\.1).max() ?? -1
        }
        result.load = ProcStats.loadAverage()
        stopEverything()
        finish(.success(result))
    }

    private func fail(_ message: String) {
        guard phase != .done else { return }
        stopEverything()
        finish(.failure(BenchError(description: message)))
    }

    /// Every connection closed, the daemons stopped (SIGTERM) and Redis, each by its PID.
    private func stopEverything() {
        phase = .done
        probeTimer.stop()
        phaseTimer.stop()
        for writer in writers {
            writer.retry.stop()
            writer.connection?.onEnd = nil
            writer.connection?.close()
        }
        for watcher in watchers {
            watcher.connection?.onEnd = nil
            watcher.connection?.close()
        }
        for daemon in daemons { daemon.stop() }
        redis.stop()
    }

    static func summaryLine(_ r: Result) -> String {
        "redis-restart n=\(r.watchers) rooms=\(r.rooms) daemons=\(r.daemons) appendfsync \(r.fsync):"
            + " redis back \(format(r.redisDownMs, 1)) ms after kill -9 (AOF \(r.aofBytes / 1024) KiB);"
            + " first ack \(format(r.firstAcknowledgedMs, 1)) ms after (per daemon \(r.firstAcknowledgedPerDaemonMs.map { format($0, 0) }.joined(separator: "/")));"
            + " rooms' first ack p50 \(format(r.roomFirstAcknowledgedMs.p50, 1)) max \(format(r.roomFirstAcknowledgedMs.max, 1)) ms;"
            + " watchers caught up p50 \(format(r.catchUpMs.p50, 1)) p99 \(format(r.catchUpMs.p99, 1)) max \(format(r.catchUpMs.max, 1)) ms"
            + " (\(r.caughtUp)/\(r.watchers); max per daemon \(r.catchUpMaxPerDaemonMs.map { format($0, 0) }.joined(separator: "/")));"
            + " \(r.unavailable) unavailable, \(r.resyncs) resyncs, \(r.gaps) gaps,"
            + " \(r.lostRevisions) lost of \(r.acknowledgedBeforeKill) acknowledged;"
            + " during the catch-up \(r.linesToWatchersDuringCatchUp) lines to watchers, CPU ms bench \(format(r.benchCPUDuringCatchUpMs, 0))"
            + " daemons \(r.daemonsCPUDuringCatchUpMs.map { format($0, 0) }.joined(separator: "/")) redis \(format(r.redisCPUDuringCatchUpMs, 0))"
    }

    static let usage = """
        usage: navsync-bench redis-restart --dir DIR --redis-port P --ports P1,P2,P3 [options]
          starts redis-server (AOF in DIR) and a navsyncd --backplane per port, kills Redis
          with SIGKILL under load, restarts it and times the watchers' catch-up
          --daemon PATH --redis-server PATH   (default .build/release/navsyncd, /usr/bin/redis-server)
          --fsync always|everysec             Redis appendfsync (default always)
          -n N --rooms R                      watchers (default 1000), rooms = writers (default 100)
          --warmup MS --settle MS             before the kill; after the last catch-up (2000, 500)
          --timeout S --json FILE --quiet
        """

    /// `navsync-bench redis-restart ...` from main.
    static func run(_ arguments: [String]) -> Never {
        let spec = CommandLineSpec(
            valued: ["daemon", "redis-server", "host", "redis-port", "ports", "dir", "fsync", "watchers", "rooms", "warmup",
                     "settle", "timeout", "json"],
            switches: ["quiet"], shortAliases: ["n": "watchers"])
        var options = Options()
        let json: String?
        do {
            let parsed = try spec.parse(arguments)
            func number(_ flag: String, _ fallback: Int) throws(CommandLineSpec.UsageError) -> Int {
                try parsed.last(flag).map { text throws(CommandLineSpec.UsageError) in
                    try CommandLineSpec.positiveInt(text, flag: flag, minimum: 1)
                } ?? fallback
            }
            options.daemon = parsed.last("daemon") ?? options.daemon
            options.redisServer = parsed.last("redis-server") ?? options.redisServer
            options.host = parsed.last("host") ?? options.host
            options.redisPort = try number("redis-port", options.redisPort)
            guard let ports = parsed.last("ports") else { throw CommandLineSpec.UsageError("redis-restart needs --ports P1,P2,...") }
            for part in ports.split(separator: ",") {
                options.daemonPorts.append(try CommandLineSpec.positiveInt(String(part), flag: "ports", minimum: 1))
            }
            guard !options.daemonPorts.isEmpty else { throw CommandLineSpec.UsageError("--ports needs at least one port") }
            guard let directory = parsed.last("dir") else { throw CommandLineSpec.UsageError("redis-restart needs --dir DIR") }
            options.directory = directory
            options.fsync = parsed.last("fsync") ?? options.fsync
            guard ["always", "everysec"].contains(options.fsync) else {
                throw CommandLineSpec.UsageError("--fsync is always or everysec, not '\(options.fsync)'")
            }
            options.watchers = try number("watchers", options.watchers)
            options.rooms = try number("rooms", options.rooms)
            options.warmupMilliseconds = UInt64(try number("warmup", Int(options.warmupMilliseconds)))
            options.settleMilliseconds = UInt64(try number("settle", Int(options.settleMilliseconds)))
            options.timeoutSeconds = UInt64(try number("timeout", Int(options.timeoutSeconds)))
            options.quiet = parsed.has("quiet")
            json = parsed.last("json")
        } catch {
            die("redis-restart: \(error)\n\(usage)", status: 64)
        }
        var clean = false
        let describe = { (result: Result) -> String in
            clean = result.gaps == 0 && result.lostRevisions == 0
            return summaryLine(result)
        }
        let summary = runModeOrDie("redis-restart", json: json, summary: describe) {
            RedisRestartBench(loop: $0, options: options, finish: $1).start
        }
        print(summary)
        exit(clean ? 0 : 2)
    }
}
