import GNUFlags

/// Command-line settings of one bench run.
struct BenchOptions {
    var system: System = .navsync
    /// Name recorded in the result instead of the system's, e.g. `baseline` for an older navsyncd
    /// measured in the same run as the current one.
    var label: String?
    var host = "127.0.0.1"
    var port = 7878
    /// The server's PIDs (a fleet: its daemons and Redis), for RSS and CPU
    /// figures from /proc, summed; empty skips them.
    var pids: [Int32] = []
    /// Ports the watchers use in turn (a fleet's daemons); empty: `port`.
    var watcherPorts: [Int] = []
    /// navsync-tls, navsync-wss, redis-tls: the server's TLS port (watchers), and the CA its certificate chains to.
    var tlsPort: Int?
    var tlsCA: String?
    /// Leader: helper processes holding more watchers, and where they report.
    var helpers = 0
    var controlPort = 0
    /// Helper: the leader's control port (no actor; watchers only).
    var leaderPort: Int?
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
    /// `--watcher-token`, `--actor-token`: navsync over TCP, `AUTH` first.
    var watcherToken: String?
    var actorToken: String?

    static let usage = """
        usage: navsync-bench [run] [options]           run the fan-out workload once
               navsync-bench floor-server --port N     the minimal broadcaster (yardstick)
               navsync-bench report DIR                medians of DIR/*.json: table, summary.json, plot data
               navsync-bench restart --daemon PATH --port N --state FILE [-n N] [--rooms R] [--changes C]
                     [--behind B] [--missed M] [--mode resume|plain] [--signal TERM|KILL] [--log FILE] [--json FILE]
                                                       watchers back after a daemon restart (WATCH <rev> or WATCH)
               navsync-bench restart-report DIR        medians of DIR/restart-*.json and DIR/history.json
               navsync-bench history --daemon PATH --port N [--rooms R] [--history H] [--json FILE]
                                                       RSS of the WATCH <rev> history, R rooms filled to H events

          --system navsync|navsync-ws|navsync-sse|navsync-tls|navsync-wss|redis|redis-tls|nats|floor
                                              protocol (default navsync); navsync-wss: WebSocket inside TLS
          --label NAME                        name the result NAME (e.g. baseline) instead of the system
          --host ADDR --port N                server address (default 127.0.0.1:7878)
          --pid PID                           server process, for RSS and CPU from /proc (repeatable: summed)
          --ports P1,P2,...                   watchers connect to these in turn (a fleet); the actor to --port
          --tls-port N --tls-ca FILE          navsync-tls, navsync-wss, redis-tls: watchers connect to N over TLS, trusting FILE
          --helpers N --control-port C        leader: wait for N helper processes reporting on 127.0.0.1:C
          --leader C                          helper: hold -n watchers and report to the leader on port C
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
          --watcher-token T --actor-token T   navsync: watchers and the actor AUTH with these first
        """

    /// `-n`, `-m` and `-k` are short for `--watchers`, `--rounds` and `--burst`.
    static let spec = CommandLineSpec(
        valued: ["system", "label", "host", "port", "pid", "ports", "tls-port", "tls-ca", "helpers", "control-port", "leader", "watchers", "rounds", "warmup", "burst", "burst-deliveries",
                 "watcher-token", "actor-token",
                 "min-bursts", "max-bursts", "max-burst-seconds", "connect-batch", "timeout", "run", "json"],
        switches: ["quiet", "help"],
        shortAliases: ["n": "watchers", "m": "rounds", "k": "burst", "h": "help"])

    static func parse(_ arguments: [String]) throws(CommandLineSpec.UsageError) -> BenchOptions {
        let parsed = try spec.parse(arguments)
        guard parsed.positionals.isEmpty else {
            throw CommandLineSpec.UsageError("unexpected argument '\(parsed.positionals[0])'")
        }
        var options = BenchOptions()
        /// A whole number given by flag, if it was; counts that must be
        /// positive (`minimum: 1`) are raised to 1, as they always were.
        func number(_ flag: String, minimum: Int = 0) throws(CommandLineSpec.UsageError) -> Int? {
            guard let text = parsed.last(flag) else { return nil }
            return max(minimum, try CommandLineSpec.positiveInt(text, flag: flag, minimum: 0))
        }
        if let text = parsed.last("system") {
            guard let system = System(rawValue: text) else { throw CommandLineSpec.UsageError("unknown system \(text)") }
            options.system = system
        }
        options.label = parsed.last("label") ?? options.label
        options.host = parsed.last("host") ?? options.host
        options.port = try number("port") ?? options.port
        for text in parsed.values("pid") {
            options.pids.append(Int32(try CommandLineSpec.positiveInt(text, flag: "pid", minimum: 1)))
        }
        if let text = parsed.last("ports") {
            for part in text.split(separator: ",") {
                options.watcherPorts.append(try CommandLineSpec.positiveInt(String(part), flag: "ports", minimum: 1))
            }
        }
        options.tlsPort = try number("tls-port", minimum: 1)
        options.tlsCA = parsed.last("tls-ca")
        if options.system.watchersOverTLS && (options.tlsPort == nil || options.tlsCA == nil) {
            throw CommandLineSpec.UsageError("--system \(options.system.rawValue) needs --tls-port and --tls-ca")
        }
        options.helpers = try number("helpers") ?? 0
        options.controlPort = try number("control-port") ?? 0
        options.leaderPort = try number("leader", minimum: 1)
        options.watchers = try number("watchers", minimum: 1) ?? options.watchers
        options.rounds = try number("rounds", minimum: 1) ?? options.rounds
        options.warmup = try number("warmup") ?? options.warmup
        options.burstSize = try number("burst", minimum: 1) ?? options.burstSize
        options.minBurstDeliveries = try number("burst-deliveries") ?? options.minBurstDeliveries
        options.minBursts = try number("min-bursts", minimum: 1) ?? options.minBursts
        options.maxBursts = try number("max-bursts", minimum: 1) ?? options.maxBursts
        options.maxBurstSeconds = try number("max-burst-seconds", minimum: 1).map(Double.init) ?? options.maxBurstSeconds
        options.connectBatch = try number("connect-batch", minimum: 1) ?? options.connectBatch
        options.timeoutSeconds = try number("timeout", minimum: 1).map { UInt64($0) } ?? options.timeoutSeconds
        options.runIndex = try number("run") ?? options.runIndex
        options.jsonPath = parsed.last("json")
        options.quiet = parsed.has("quiet")
        options.watcherToken = parsed.last("watcher-token")
        options.actorToken = parsed.last("actor-token")
        if (options.watcherToken != nil || options.actorToken != nil) && options.system != .navsync {
            throw CommandLineSpec.UsageError("--watcher-token and --actor-token are for --system navsync")
        }
        options.maxBursts = max(options.maxBursts, options.minBursts)
        return options
    }
}
