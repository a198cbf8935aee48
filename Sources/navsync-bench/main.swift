import GNUFlags
import Glibc
import UVLoop

// navsync-bench: fan-out latency and throughput of navsyncd, side by side
// with Redis pub/sub, NATS and a minimal broadcaster, all driven by the same
// client code on UVLoop. See docs/PERFORMANCE.md.

func die(_ message: String, status: Int32 = 1) -> Never {
    let text = "navsync-bench: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

/// Runs a mode that reports once through `finish` (its `make` returns its
/// start function), then writes its result to `json` and its summary line;
/// returns what failed, if anything.
func runUntilDone<Outcome: Encodable>(
    _ loop: EventLoop, json: String?, summary: (Outcome) -> String, _ line: inout String,
    _ make: (@escaping (Result<Outcome, BenchError>) -> Void) -> () -> Void
) -> BenchError? {
    var outcome: Result<Outcome, BenchError>?
    let start = make { result in
        outcome = result
        loop.stop()
    }
    start()
    loop.run()
    withExtendedLifetime(start) {}
    switch outcome {
    case .success(let result):
        line = summary(result)
        guard let json else { return nil }
        do {
            try Report.write(result, to: json)
            return nil
        } catch {
            return BenchError(description: "cannot write \(json): \(error)")
        }
    case .failure(let error):
        return error
    case nil:
        return BenchError(description: "the loop ended before the run finished")
    }
}

/// A mode run alone on a fresh loop through `runUntilDone`: dies with the
/// mode's `name` on failure, returns its summary line.
func runModeOrDie<Outcome: Encodable>(
    _ name: String, json: String?, summary: (Outcome) -> String,
    _ make: (EventLoop, @escaping (Result<Outcome, BenchError>) -> Void) -> () -> Void
) -> String {
    let loop: EventLoop
    do {
        loop = try EventLoop()
    } catch {
        die("cannot start the event loop: \(error)")
    }
    var line = ""
    if let failure = runUntilDone(loop, json: json, summary: summary, &line, { make(loop, $0) }) {
        die("\(name): \(failure)")
    }
    return line
}

EventLoop.ignoreSIGPIPE()
var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "run"
if arguments.first == command { arguments.removeFirst() }
if arguments.contains("-h") || arguments.contains("--help") {
    print(BenchOptions.usage)
    print(WriterOptions.usage)
    print(RedisRestartBench.usage)
    print(TokenBench.usage)
    exit(0)
}

switch command {
case "tokens":
    let spec = CommandLineSpec(valued: ["count"], switches: [])
    let count: Int
    do {
        count = try spec.parse(arguments).last("count").map { text throws(CommandLineSpec.UsageError) in
            try CommandLineSpec.positiveInt(text, flag: "count")
        } ?? 20000
    } catch {
        die("tokens: \(error)", status: 64)
    }
    for row in TokenBench.run(count: count) {
        let rate = Int(row.perCoreSecond.rounded())
        let micro = (row.cpuSeconds / Double(row.count) * 1_000_000 * 10).rounded() / 10
        print("tokens \(row.algorithm): \(row.count) verified in \(row.cpuSeconds) s of CPU: \(rate) per core-second (\(micro) µs each)")
    }

case "report":
    guard let directory = arguments.first else { die("report needs a directory", status: 64) }
    do {
        print(try Report.run(directory: directory), terminator: "")
    } catch {
        die("report: \(error)")
    }

case "restart-report":
    guard let directory = arguments.first else { die("restart-report needs a directory", status: 64) }
    do {
        print(try RestartReport.run(directory: directory), terminator: "")
    } catch {
        die("restart-report: \(error)")
    }

case "floor-server":
    let spec = CommandLineSpec(valued: ["host", "port"], switches: [])
    let host: String
    let port: Int
    do {
        let parsed = try spec.parse(arguments)
        host = parsed.last("host") ?? "127.0.0.1"
        port = try parsed.last("port").map { text throws(CommandLineSpec.UsageError) in
            try CommandLineSpec.positiveInt(text, flag: "port", minimum: 0)
        } ?? 0
    } catch {
        die("floor-server: \(error)", status: 64)
    }
    ProcStats.raiseOpenFileLimit()
    do {
        let loop = try EventLoop()
        let server = FloorServer(loop: loop)
        let bound = try server.listen(host: host, port: port)
        print("floor-server listening on \(host):\(bound)")
        let stop = { loop.stop() }
        let signals = try [SIGINT, SIGTERM].map { try SignalWatcher(loop: loop, signal: $0, stop) }
        loop.run()
        signals.forEach { $0.close() }
        withExtendedLifetime(server) {}
        exit(0)
    } catch {
        die("floor-server: \(error)")
    }

case "run":
    let options: BenchOptions
    do {
        options = try BenchOptions.parse(arguments)
    } catch {
        die("\(error) (see navsync-bench --help)", status: 64)
    }
    let loop: EventLoop
    do {
        loop = try EventLoop()
    } catch {
        die("cannot start the event loop: \(error)")
    }
    var outcome: Result<RunResult, BenchError>?
    let bench = Bench(loop: loop, options: options) { result in
        outcome = result
        loop.stop()
    }
    bench.start()
    loop.run()
    switch outcome {
    case .success(let result):
        if let path = options.jsonPath {
            do {
                try Report.write(result, to: path)
            } catch {
                die("cannot write \(path): \(error)")
            }
        }
        print(Report.summaryLine(result))
        // Exiting closes every socket at once; no need to close 10,000 handles one by one.
        exit(result.lostEvents == 0 && result.errors == 0 ? 0 : 2)
    case .failure(let error):
        die(error.description)
    case nil:
        die("the loop ended before the run finished")
    }

case "restart", "history":
    // Both start navsyncd themselves (--daemon), on --port.
    let spec = CommandLineSpec(
        valued: ["daemon", "host", "port", "state", "log", "watchers", "rooms", "changes", "missed", "behind", "mode", "signal",
                 "history", "timeout", "json"],
        switches: ["quiet"], shortAliases: ["n": "watchers"])
    let loop: EventLoop
    do {
        loop = try EventLoop()
    } catch {
        die("cannot start the event loop: \(error)")
    }
    var failure: BenchError?
    var summary = ""
    var json: String?
    do {
        let parsed = try spec.parse(arguments)
        func number(_ flag: String, _ fallback: Int, minimum: Int = 1) throws(CommandLineSpec.UsageError) -> Int {
            try parsed.last(flag).map { text throws(CommandLineSpec.UsageError) in
                try CommandLineSpec.positiveInt(text, flag: flag, minimum: minimum)
            } ?? fallback
        }
        json = parsed.last("json")
        if command == "restart" {
            var options = RestartBench.Options()
            options.daemon = parsed.last("daemon") ?? options.daemon
            options.host = parsed.last("host") ?? options.host
            options.port = try number("port", options.port)
            guard let state = parsed.last("state") else { throw CommandLineSpec.UsageError("restart needs --state FILE") }
            options.statePath = state
            options.logPath = parsed.last("log") ?? options.logPath
            options.watchers = try number("watchers", options.watchers)
            options.rooms = try number("rooms", options.rooms)
            options.changesBefore = try number("changes", options.changesBefore)
            options.missed = try number("missed", options.missed, minimum: 0)
            options.behind = try number("behind", options.behind, minimum: 0)
            switch parsed.last("mode") ?? "resume" {
            case "resume": options.resume = true
            case "plain": options.resume = false
            case let other: throw CommandLineSpec.UsageError("--mode is resume or plain, not '\(other)'")
            }
            switch parsed.last("signal") ?? "TERM" {
            case "TERM": options.signal = SIGTERM
            case "KILL": options.signal = SIGKILL
            case let other: throw CommandLineSpec.UsageError("--signal is TERM or KILL, not '\(other)'")
            }
            options.timeoutSeconds = UInt64(try number("timeout", Int(options.timeoutSeconds)))
            options.quiet = parsed.has("quiet")
            failure = runUntilDone(loop, json: json, summary: RestartBench.summaryLine, &summary) {
                RestartBench(loop: loop, options: options, finish: $0).start
            }
        } else {
            var options = HistoryBench.Options()
            options.daemon = parsed.last("daemon") ?? options.daemon
            options.host = parsed.last("host") ?? options.host
            options.port = try number("port", options.port)
            options.logPath = parsed.last("log") ?? options.logPath
            options.rooms = try number("rooms", options.rooms)
            options.history = try number("history", options.history)
            if options.history != 1024 { options.extraArguments = ["--history", "\(options.history)"] }
            options.timeoutSeconds = UInt64(try number("timeout", Int(options.timeoutSeconds)))
            options.quiet = parsed.has("quiet")
            failure = runUntilDone(loop, json: json, summary: HistoryBench.summaryLine, &summary) {
                HistoryBench(loop: loop, options: options, finish: $0).start
            }
        }
    } catch {
        die("\(command): \(error) (see navsync-bench --help)", status: 64)
    }
    if let failure { die("\(command): \(failure)") }
    print(summary)
    exit(0)
case "writers":
    runWriters(arguments)

case "redis-restart":
    RedisRestartBench.run(arguments)

default:
    die("unknown command \(command) (see navsync-bench --help)", status: 64)
}
