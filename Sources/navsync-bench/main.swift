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

EventLoop.ignoreSIGPIPE()
var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "run"
if arguments.first == command { arguments.removeFirst() }
if arguments.contains("-h") || arguments.contains("--help") {
    print(BenchOptions.usage)
    exit(0)
}

switch command {
case "report":
    guard let directory = arguments.first else { die("report needs a directory", status: 64) }
    do {
        print(try Report.run(directory: directory), terminator: "")
    } catch {
        die("report: \(error)")
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

default:
    die("unknown command \(command) (see navsync-bench --help)", status: 64)
}
