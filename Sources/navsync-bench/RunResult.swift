/// Nearest-rank percentiles of a sample, in the sample's unit.
struct Percentiles: Codable {
    var p50 = 0.0
    var p90 = 0.0
    var p99 = 0.0
    var max = 0.0
    var mean = 0.0

    init() {}

    init(_ sample: [Double]) {
        guard !sample.isEmpty else { return }
        let sorted = sample.sorted()
        func rank(_ p: Double) -> Double {
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        p50 = rank(0.50)
        p90 = rank(0.90)
        p99 = rank(0.99)
        max = sorted[sorted.count - 1]
        mean = sorted.reduce(0, +) / Double(sorted.count)
    }
}

/// Everything one run measured; written as JSON, one file per run.
struct RunResult: Codable {
    var system = ""
    var n = 0
    var rounds = 0
    var burstSize = 0
    var run = 0
    var loadBefore = ""
    var loadAfter = ""
    var openFileLimit = 0
    /// Online CPUs: the server and every bench process share them (absent in older results).
    var cores: Int?

    var connectSeconds = 0.0
    var connectFailures = 0
    /// Server RSS with only the actor connected, and with all watchers connected and idle.
    var rssBeforeKiB: Int?
    var rssIdleKiB: Int?
    var rssPerWatcherBytes: Double?
    var rssEndKiB: Int?
    var rssPeakKiB: Int?

    /// Closed loop: time from the actor's write to the first and to the last watcher holding the event.
    var closedFirstMicros = Percentiles()
    var closedLastMicros = Percentiles()
    var closedDaemonCPUMicrosPerChange: Double?
    var closedBenchCPUMicrosPerChange = 0.0

    /// The closed loop's CPU floor: server and bench CPU per change spread
    /// over every core. While the machine's cores are the bound, no
    /// schedule of that work finishes a change sooner on average, so a mean
    /// latency near it says the cores bound the figure, not waiting.
    var closedCPUFloorMicros: Double? {
        guard let daemon = closedDaemonCPUMicrosPerChange, let cores, cores > 0 else { return nil }
        return (daemon + closedBenchCPUMicrosPerChange) / Double(cores)
    }

    /// Bursts: `burstSize` changes in one write; timed until every watcher holds all of them.
    var bursts = 0
    var burstDeliveries = 0
    var burstSeconds = 0.0
    var deliveriesPerSecond = 0.0
    var burstMillis = Percentiles()
    /// Server CPU over all bursts: from /proc/PID/task/*/schedstat (ns) and, as a check, /proc/PID/stat (ticks).
    var burstDaemonCPUSeconds: Double?
    var daemonCPUNanosPerDelivery: Double?
    var daemonCPUStatNanosPerDelivery: Double?
    var burstBenchCPUSeconds = 0.0
    var benchCPUNanosPerDelivery = 0.0

    var changes = 0
    var lostEvents = 0
    var extraEvents = 0
    var errors = 0
    var resyncs = 0
}
