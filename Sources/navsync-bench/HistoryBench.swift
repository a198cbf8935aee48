import Glibc
import UVLoop

/// `navsync-bench history`: what the `WATCH <rev>` history costs in memory
/// at the daemon's default bounds (`--history 1024`, `--history-bytes` 1 MiB)
/// for many rooms. A memory-only daemon of the bench's own; RSS is read
/// after one change in every room (the rooms exist, their histories hold one
/// event), after the histories are full (`--history` changes per room), and
/// after as many again (the rings turn over: memory should stay flat).
final class HistoryBench {
    struct Options {
        var daemon = ".build/release/navsyncd"
        var host = "127.0.0.1"
        var port = 7878
        var logPath = "/dev/null"
        var rooms = 1000
        var history = 1024
        var extraArguments: [String] = []
        var settleMilliseconds: UInt64 = 500
        var timeoutSeconds: UInt64 = 600
        var jsonPath: String?
        var quiet = false
    }

    struct Result: Codable {
        var rooms = 0
        var historyPerRoom = 0
        var daemonArguments: [String] = []
        var rssStartKiB = 0
        /// Every room changed once.
        var rssOneEventKiB = 0
        /// Every room's history full.
        var rssFullKiB = 0
        /// As many changes again: the rings turned over once.
        var rssTurnedOverKiB = 0
        var rssPeakKiB = 0
        var eventsHeld = 0
        var meanEventLineBytes = 0.0
        /// (full - one event) / the events added.
        var rssPerEventBytes = 0.0
        var rssPerRoomKiB = 0.0
        var fillSeconds = 0.0
    }

    let loop: EventLoop
    let options: Options
    private let process: DaemonProcess
    private var actor: ChangeDriver!
    private var result = Result()
    private let timer: LoopTimer
    private var done = false
    private let finish: (Swift.Result<Result, BenchError>) -> Void

    init(loop: EventLoop, options: Options, finish: @escaping (Swift.Result<Result, BenchError>) -> Void) {
        self.loop = loop
        self.options = options
        self.finish = finish
        self.timer = LoopTimer(loop: loop)
        let arguments = ["--listen", "\(options.host):\(options.port)", "--state", "none", "--log-level", "warn",
                         "--max-rooms", "\(max(1024, options.rooms))"] + options.extraArguments
        process = DaemonProcess(executable: options.daemon, arguments: arguments, logPath: options.logPath)
        result.daemonArguments = arguments
    }

    private func progress(_ message: @autoclosure () -> String) {
        writeProgress("navsync-bench history", quiet: options.quiet, message())
    }

    private func fail(_ message: String) {
        guard !done else { return }
        done = true
        process.stop()
        finish(.failure(BenchError(description: message)))
    }

    /// Waits for the daemon to go quiet, then reads its RSS.
    private func settledRSS(_ then: @escaping (Int) -> Void) {
        timer.start(afterMilliseconds: options.settleMilliseconds) { [unowned self] in
            guard let rss = self.process.rssKiB() else {
                self.fail("the daemon is gone")
                return
            }
            then(rss)
        }
    }

    func start() {
        result.rooms = options.rooms
        result.historyPerRoom = options.history
        guard let actor = process.launch(
            loop: loop, host: options.host, port: options.port, rooms: options.rooms, timeoutSeconds: options.timeoutSeconds,
            onTimeout: { [unowned self] in self.fail("timed out after \(self.options.timeoutSeconds) s") },
            fail: { [unowned self] in self.fail($0) }) else { return }
        self.actor = actor
        let rooms = options.rooms, history = options.history
        actor.connect { [unowned self] in
            self.settledRSS { [unowned self] start in
                self.result.rssStartKiB = start
                self.actor.makeChanges(rooms: rooms, perRoom: 1) { [unowned self] in
                    self.settledRSS { [unowned self] one in
                        self.result.rssOneEventKiB = one
                        let bytesBefore = self.actor.eventBytes, countBefore = self.actor.eventCount
                        self.progress("\(rooms) rooms; filling each history to \(history) events")
                        let fillStart = ProcStats.nowNanoseconds()
                        self.actor.makeChanges(rooms: rooms, perRoom: history - 1) { [unowned self] in
                            self.result.fillSeconds = Double(ProcStats.nowNanoseconds() - fillStart) / 1e9
                            self.settledRSS { [unowned self] full in
                                self.result.rssFullKiB = full
                                let added = self.actor.eventCount - countBefore
                                self.result.eventsHeld = rooms * history
                                self.result.meanEventLineBytes = Double(self.actor.eventBytes - bytesBefore) / Double(max(added, 1))
                                self.result.rssPerEventBytes = Double(full - one) * 1024 / Double(max(added, 1))
                                self.result.rssPerRoomKiB = Double(full - start) / Double(rooms)
                                self.progress("full: RSS \(full) KiB; turning every ring over once")
                                self.actor.makeChanges(rooms: rooms, perRoom: history) { [unowned self] in
                                    self.settledRSS { [unowned self] turned in
                                        self.result.rssTurnedOverKiB = turned
                                        self.result.rssPeakKiB = ProcStats.statusKilobytes(pid: self.process.pid, field: "VmHWM") ?? 0
                                        self.done = true
                                        self.process.stop()
                                        self.finish(.success(self.result))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    static func summaryLine(_ r: Result) -> String {
        "history: \(r.rooms) rooms x \(r.historyPerRoom) events (lines of \(format(r.meanEventLineBytes, 1)) B):"
            + " RSS \(r.rssStartKiB) KiB at start, \(r.rssOneEventKiB) KiB with one event per room,"
            + " \(r.rssFullKiB) KiB full, \(r.rssTurnedOverKiB) KiB after turning over (peak \(r.rssPeakKiB) KiB);"
            + " \(format(r.rssPerEventBytes, 1)) B per event, \(format(r.rssPerRoomKiB, 1)) KiB per room"
    }
}
