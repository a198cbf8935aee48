/// Command-line settings of one bench run.
struct BenchOptions {
    var system: System = .navsync
    /// Name recorded in the result instead of the system's, e.g. `baseline` for an older navsyncd
    /// measured in the same run as the current one.
    var label: String?
    var host = "127.0.0.1"
    var port = 7878
    /// The server's PID, for RSS and CPU figures from /proc; nil skips them.
    var pid: Int32?
    /// Watcher connections.
    var watchers = 1000
    /// Closed-loop changes measured (after `warmup` unmeasured ones).
    var rounds = 300
    var warmup = 10
    /// Changes per burst.
    var burstSize = 100
    /// Bursts are repeated until at least this many deliveries were timed...
    var minBurstDeliveries = 2_000_000
    /// ...and at least this many bursts ran, but never more than `maxBursts`.
    var minBursts = 3
    var maxBursts = 400
    /// ...and no new burst starts once the bursts took this long in all (the floor needs it).
    var maxBurstSeconds = 10.0
    /// Connects in flight at once.
    var connectBatch = 200
    /// Quiet time before the idle RSS is read.
    var settleMilliseconds: UInt64 = 300
    /// The whole run is abandoned after this long.
    var timeoutSeconds: UInt64 = 600
    var jsonPath: String?
    /// Run number within a configuration, for the file name and the report.
    var runIndex = 1
    var quiet = false

    static let usage = """
        usage: navsync-bench [run] [options]           run the fan-out workload once
               navsync-bench floor-server --port N     the minimal broadcaster (yardstick)
               navsync-bench report DIR                medians of DIR/*.json: table, summary.json, plot data

          --system navsync|redis|nats|floor   protocol to speak (default navsync)
          --label NAME                        name the result NAME (e.g. baseline) instead of the system
          --host ADDR --port N                server address (default 127.0.0.1:7878)
          --pid PID                           server process, for RSS and CPU from /proc
          -n N                                watcher connections (default 1000)
          -m M                                closed-loop changes measured (default 300)
          --warmup N                          unmeasured changes first (default 10)
          -k K                                changes per burst (default 100)
          --burst-deliveries D                time bursts until D deliveries (default 2000000)
          --min-bursts N --max-bursts N       bounds on the number of bursts (default 3, 400)
          --max-burst-seconds S               start no burst after S seconds of bursts (default 10)
          --connect-batch N                   connects in flight (default 200)
          --timeout S                         give up after S seconds (default 600)
          --run I                             run number recorded in the result (default 1)
          --json FILE                         write the result as JSON
          --quiet                             no progress on stderr
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let next = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return next
        }
        func number(_ flag: String) throws(UsageError) -> Int {
            let text = try value(flag)
            guard let n = Int(text), n >= 0 else { throw UsageError(description: "\(flag): not a number: \(text)") }
            return n
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--system":
                let text = try value(flag)
                guard let system = System(rawValue: text) else { throw UsageError(description: "unknown system \(text)") }
                options.system = system
            case "--label": options.label = try value(flag)
            case "--host": options.host = try value(flag)
            case "--port": options.port = try number(flag)
            case "--pid": options.pid = Int32(try number(flag))
            case "-n": options.watchers = max(1, try number(flag))
            case "-m": options.rounds = max(1, try number(flag))
            case "--warmup": options.warmup = try number(flag)
            case "-k": options.burstSize = max(1, try number(flag))
            case "--burst-deliveries": options.minBurstDeliveries = try number(flag)
            case "--min-bursts": options.minBursts = max(1, try number(flag))
            case "--max-bursts": options.maxBursts = max(1, try number(flag))
            case "--max-burst-seconds": options.maxBurstSeconds = Double(max(1, try number(flag)))
            case "--connect-batch": options.connectBatch = max(1, try number(flag))
            case "--timeout": options.timeoutSeconds = UInt64(max(1, try number(flag)))
            case "--run": options.runIndex = try number(flag)
            case "--json": options.jsonPath = try value(flag)
            case "--quiet": options.quiet = true
            default: throw UsageError(description: "unknown option \(flag)")
            }
        }
        options.maxBursts = max(options.maxBursts, options.minBursts)
        return options
    }
}
