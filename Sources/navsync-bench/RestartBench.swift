import Glibc
import UVLoop

/// `navsync-bench restart`: how long 1,000 watchers take to be current again
/// after navsyncd restarts on its state file, and how many bytes that costs,
/// when they come back with `WATCH <rev>` (resume) or with plain `WATCH`.
///
/// One run: start the daemon on a fresh state file; make `changesBefore`
/// changes in each of `rooms` rooms; connect the watchers (spread over the
/// rooms, `JOIN` + `WATCH`) and wait until each holds its room's revision;
/// stop the daemon (SIGTERM, or SIGKILL) and wait for every connection to
/// end; start it again on the same file; the actor makes `missed` more
/// changes per room (what the watchers miss while they are away); then every
/// watcher reconnects at once and sends `JOIN` and `WATCH <its rev>` or
/// `WATCH`. Timed from that moment until every watcher holds its room's
/// revision; bytes are everything the watchers read after reconnecting.
final class RestartBench {
    struct Options {
        var daemon = ".build/release/navsyncd"
        var host = "127.0.0.1"
        var port = 7878
        var statePath = ""
        var logPath = "/dev/null"
        var watchers = 1000
        var rooms = 100
        var changesBefore = 5
        var missed = 0
        /// Changes per room made after the watchers left and before the daemon stops:
        /// the journal has them, the history of the restarted daemon does not.
        var behind = 0
        var resume = true
        var signal = SIGTERM
        var connectBatch = 200
        var timeoutSeconds: UInt64 = 300
        var jsonPath: String?
        var quiet = false
    }

    struct Result: Codable {
        var mode = ""
        var watchers = 0
        var rooms = 0
        var changesBefore = 0
        var missed = 0
        var behind = 0
        var signal = ""
        /// From starting the new process until it accepted the first connection.
        var daemonReadyMs = 0.0
        /// From the watchers starting to reconnect until the last was connected.
        var reconnectMs = 0.0
        /// From the watchers starting to reconnect until every one held its room's revision.
        var currentMs = 0.0
        /// Everything the watchers read after reconnecting (the JOIN's STATE included).
        var bytesTotal = 0
        /// The same less each watcher's JOIN reply: what the WATCH answer cost.
        var bytesWatchAnswers = 0
        var continues = 0
        var states = 0
        var events = 0
        /// The daemon's CPU time from the reconnect until all were current.
        var daemonCPUMs: Double?
        var rssAfterKiB: Int?
        var load = ""
    }

    /// One watcher across the restart.
    final class Watcher {
        let room: Int
        var revision: UInt64 = 0
        var connection: StreamConnection?
        var lines = LineCollector()
        /// Lines read on the current connection (the first answers JOIN).
        var linesRead = 0
        var current = false
        var ended = false

        init(room: Int) { self.room = room }
    }

    enum Phase { case filling, watching, restarting, catchingUp, done }

    let loop: EventLoop
    let options: Options
    private let process: DaemonProcess
    private var actor: ChangeDriver!
    private var watchers: [Watcher] = []
    private var phase = Phase.filling
    private var result = Result()
    private var currentCount = 0
    private var connectedCount = 0
    private var connectsInFlight = 0
    private var nextToConnect = 0
    private var endedCount = 0
    private var reconnectStartedAt: UInt64 = 0
    private var cpuAtReconnect: UInt64?
    private let finish: (Swift.Result<Result, BenchError>) -> Void

    init(loop: EventLoop, options: Options, finish: @escaping (Swift.Result<Result, BenchError>) -> Void) {
        self.loop = loop
        self.options = options
        self.finish = finish
        var arguments = ["--listen", "\(options.host):\(options.port)", "--state", options.statePath,
                         "--max-clients", "\(options.watchers + 100)", "--log-level", "warn"]
        if options.rooms > 1000 { arguments += ["--max-rooms", "\(options.rooms)"] }
        process = DaemonProcess(executable: options.daemon, arguments: arguments, logPath: options.logPath)
    }

    private func progress(_ message: @autoclosure () -> String) {
        writeProgress("navsync-bench restart[\(options.resume ? "resume" : "plain")]", quiet: options.quiet, message())
    }

    private func fail(_ message: String) {
        guard phase != .done else { return }
        phase = .done
        process.stop()
        finish(.failure(BenchError(description: message)))
    }

    func start() {
        result.mode = options.resume ? "resume" : "plain"
        result.watchers = options.watchers
        result.rooms = options.rooms
        result.changesBefore = options.changesBefore
        result.missed = options.missed
        result.behind = options.behind
        result.signal = options.signal == SIGKILL ? "KILL" : "TERM"
        guard ProcStats.raiseOpenFileLimit() >= options.watchers + 64 else {
            fail("open-file limit too low for \(options.watchers) watchers")
            return
        }
        unlink(options.statePath)
        guard let actor = process.launch(
            loop: loop, host: options.host, port: options.port, rooms: options.rooms, timeoutSeconds: options.timeoutSeconds,
            onTimeout: { [unowned self] in
                self.fail("timed out in phase \(self.phase) (current \(self.currentCount)/\(self.options.watchers),"
                    + " connected \(self.connectedCount), ended \(self.endedCount))")
            },
            fail: { [unowned self] in self.fail($0) }) else { return }
        self.actor = actor
        watchers = (0..<options.watchers).map { Watcher(room: $0 % options.rooms) }
        actor.connect { [unowned self] in
            self.actor.makeChanges(rooms: self.options.rooms, perRoom: self.options.changesBefore) { [unowned self] in
                self.phase = .watching
                self.progress("\(self.options.rooms) rooms at \(self.options.changesBefore) changes; connecting \(self.options.watchers) watchers")
                self.connectAll(resume: false)
            }
        }
    }

    // MARK: Watchers

    private func connectAll(resume: Bool) {
        currentCount = 0
        connectedCount = 0
        nextToConnect = 0
        for watcher in watchers {
            watcher.current = false
            watcher.ended = false
            watcher.linesRead = 0
            watcher.lines = LineCollector()
        }
        connectMore(resume: resume)
    }

    private func connectMore(resume: Bool) {
        while connectsInFlight < options.connectBatch && nextToConnect < watchers.count {
            let watcher = watchers[nextToConnect]
            nextToConnect += 1
            connectsInFlight += 1
            StreamConnection.connectTCP(loop: loop, host: options.host, port: options.port) { [unowned self] outcome in
                self.connectsInFlight -= 1
                switch outcome {
                case .success(let connection):
                    self.adopt(connection, for: watcher, resume: resume)
                case .failure(let error):
                    self.fail("a watcher could not connect: \(error)")
                    return
                }
                self.connectMore(resume: resume)
            }
        }
    }

    private func adopt(_ connection: StreamConnection, for watcher: Watcher, resume: Bool) {
        watcher.connection = connection
        connection.onRead = { [unowned self, unowned watcher] bytes in self.read(bytes, watcher) }
        connection.onEnd = { [unowned self, unowned watcher] end in self.ended(watcher, end) }
        connection.startReading()
        let watch = resume ? "WATCH \(watcher.revision)" : "WATCH"
        connection.write([Array("JOIN \(ChangeDriver.roomName(watcher.room))\n\(watch)\n".utf8)])
        connectedCount += 1
        if connectedCount == watchers.count && phase == .catchingUp {
            result.reconnectMs = Double(ProcStats.nowNanoseconds() - reconnectStartedAt) / 1e6
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer, _ watcher: Watcher) {
        let counting = phase == .catchingUp
        if counting { result.bytesTotal += bytes.count }
        var failure: String?
        watcher.lines.scan(bytes) { line in
            watcher.linesRead += 1
            // The first line answers JOIN: the room's state, but not yet watched.
            if watcher.linesRead == 1 {
                if counting { result.bytesWatchAnswers -= line.count + 1 }
                return
            }
            switch ServerReply(line: line) {
            case .state(let revision):
                watcher.revision = revision
                if counting { result.states += 1 }
            case .continued(let revision):
                if revision != watcher.revision { failure = "CONTINUE \(revision) answered WATCH \(watcher.revision)" }
                if counting { result.continues += 1 }
            case .event(let revision):
                if revision != watcher.revision + 1 { failure = "EVENT \(revision) after \(watcher.revision): a gap" }
                watcher.revision = revision
                if counting { result.events += 1 }
            case .error:
                failure = "a watcher got \(String(decoding: line, as: UTF8.self))"
            default:
                break
            }
        }
        if counting { result.bytesWatchAnswers += bytes.count }
        if let failure {
            fail(failure)
            return
        }
        if !watcher.current && watcher.linesRead >= 2 && watcher.revision == actor.revisions[watcher.room] {
            watcher.current = true
            currentCount += 1
            if currentCount == watchers.count { allCurrent() }
        } else if watcher.revision > actor.revisions[watcher.room] {
            fail("a watcher of room \(watcher.room) is at \(watcher.revision), past the room's \(actor.revisions[watcher.room])")
        }
    }

    private func ended(_ watcher: Watcher, _ end: StreamEnd) {
        guard phase == .restarting else {
            fail("the daemon closed a watcher's connection: \(end)")
            return
        }
        guard !watcher.ended else { return }
        watcher.ended = true
        watcher.connection?.close()
        watcher.connection = nil
        endedCount += 1
        if endedCount == watchers.count { restart() }
    }

    // MARK: Restart

    private func allCurrent() {
        switch phase {
        case .watching:
            phase = .restarting
            endedCount = 0
            guard options.behind > 0 else {
                progress("all \(watchers.count) watchers current; stopping the daemon with SIG\(result.signal)")
                actor.dropConnection()
                process.stop(signal: options.signal)
                return
            }
            // The watchers leave first and miss `behind` changes per room before the restart.
            for watcher in watchers {
                watcher.ended = true
                watcher.connection?.close()
                watcher.connection = nil
            }
            endedCount = watchers.count
            progress("all \(watchers.count) watchers current; they leave, \(options.behind) changes per room, then SIG\(result.signal)")
            actor.makeChanges(rooms: options.rooms, perRoom: options.behind) { [unowned self] in
                self.actor.dropConnection()
                self.process.stop(signal: self.options.signal)
                self.restart()
            }
        case .catchingUp:
            let now = ProcStats.nowNanoseconds()
            result.currentMs = Double(now - reconnectStartedAt) / 1e6
            if let before = cpuAtReconnect, let after = ProcStats.schedCPUNanoseconds(pid: process.pid) {
                result.daemonCPUMs = Double(after - before) / 1e6
            }
            result.rssAfterKiB = process.rssKiB()
            result.load = ProcStats.loadAverage()
            phase = .done
            process.stop()
            finish(.success(result))
        default:
            break
        }
    }

    private func restart() {
        let startedAt = ProcStats.nowNanoseconds()
        do {
            try process.start()
        } catch {
            fail(error.description)
            return
        }
        actor.connect { [unowned self] in
            self.result.daemonReadyMs = Double(ProcStats.nowNanoseconds() - startedAt) / 1e6
            self.progress("daemon back in \(format(self.result.daemonReadyMs, 1)) ms; \(self.options.missed) changes per room while the watchers are away")
            self.actor.makeChanges(rooms: self.options.rooms, perRoom: self.options.missed) { [unowned self] in
                self.progress("reconnecting \(self.watchers.count) watchers with \(self.options.resume ? "WATCH <rev>" : "WATCH")")
                self.phase = .catchingUp
                self.reconnectStartedAt = ProcStats.nowNanoseconds()
                self.cpuAtReconnect = ProcStats.schedCPUNanoseconds(pid: self.process.pid)
                self.connectAll(resume: self.options.resume)
            }
        }
    }

    static func summaryLine(_ r: Result) -> String {
        "restart \(r.mode) n=\(r.watchers) rooms=\(r.rooms) behind=\(r.behind) missed=\(r.missed) SIG\(r.signal): daemon ready \(format(r.daemonReadyMs, 1)) ms,"
            + " all current \(format(r.currentMs, 1)) ms (all connected \(format(r.reconnectMs, 1)) ms),"
            + " \(r.bytesTotal) B read (\(r.bytesWatchAnswers) B WATCH answers), \(r.continues) CONTINUE \(r.states) STATE \(r.events) EVENT"
    }
}
