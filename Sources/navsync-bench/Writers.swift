import GNUFlags
import Glibc
import UVLoop

/// `navsync-bench writers`: how many changes per second the daemons (one,
/// or a fleet on one Redis) acknowledge when W writers each keep a window
/// of changes in flight on their own connection — pipelining, as a busy
/// client library would. Writers are spread over the given ports in turn;
/// each writes its own room (`--rooms own`) or all write one (`--rooms one`,
/// where daemons of a fleet race for the same revisions).
/// With `--protocol http` each writer instead sends `POST /rooms/ROOM`
/// requests with a JSON change on one keep-alive connection, one request in
/// flight (the window is 1: HTTP/1.1 clients do not pipeline), and only
/// `200` answers count; any other status ends the run as a failure.
struct WriterOptions {
    enum WireProtocol: String { case line, http }
    var wireProtocol = WireProtocol.line
    var host = "127.0.0.1"
    var ports: [Int] = [7878]
    var writers = 10
    /// Changes each writer has sent and not yet seen answered, at most.
    var window = 64
    /// Acknowledged changes timed, in all (after `warmup` per writer).
    var changes = 20_000
    var warmup = 200
    var sharedRoom = false
    /// Processes whose CPU time is summed over the timed part (daemons, Redis).
    var pids: [Int32] = []
    var label = "navsync"
    var timeoutSeconds: UInt64 = 120
    var jsonPath: String?

    static let usage = """
        usage: navsync-bench writers [options]
          --host ADDR --ports P1,P2,...   daemons; writer i uses port i mod count (default 127.0.0.1:7878)
          -w N                            writer connections (default 10)
          --window N                      changes in flight per writer (default 64)
          --changes N                     acknowledged changes timed in all (default 20000)
          --warmup N                      untimed changes per writer first (default 200)
          --rooms own|one                 a room per writer, or all in one room (default own)
          --protocol line|http            SELECT lines, or POST /rooms/ROOM with a JSON change,
                                          one request in flight per connection (default line)
          --pids P1,P2,...                processes whose CPU is summed (daemons, redis)
          --label NAME                    name of the row (default navsync)
          --timeout S --json FILE
        """

    static let spec = CommandLineSpec(
        valued: ["host", "ports", "writers", "window", "changes", "warmup", "rooms", "protocol", "pids", "label", "timeout", "json"],
        switches: [], shortAliases: ["w": "writers"])

    static func parse(_ arguments: [String]) throws(CommandLineSpec.UsageError) -> WriterOptions {
        let parsed = try spec.parse(arguments)
        var options = WriterOptions()
        func number(_ flag: String) throws(CommandLineSpec.UsageError) -> Int? {
            guard let text = parsed.last(flag) else { return nil }
            return try CommandLineSpec.positiveInt(text, flag: flag, minimum: 1)
        }
        func list(_ flag: String) throws(CommandLineSpec.UsageError) -> [Int]? {
            guard let text = parsed.last(flag) else { return nil }
            var values: [Int] = []
            for part in text.split(separator: ",") {
                values.append(try CommandLineSpec.positiveInt(String(part), flag: flag, minimum: 1))
            }
            guard !values.isEmpty else { throw CommandLineSpec.UsageError("--\(flag) needs at least one value") }
            return values
        }
        options.host = parsed.last("host") ?? options.host
        options.ports = try list("ports") ?? options.ports
        options.writers = try number("writers") ?? options.writers
        options.window = try number("window") ?? options.window
        options.changes = try number("changes") ?? options.changes
        options.warmup = try number("warmup") ?? options.warmup
        options.pids = try list("pids")?.map { Int32($0) } ?? []
        options.label = parsed.last("label") ?? options.label
        options.timeoutSeconds = try number("timeout").map { UInt64($0) } ?? options.timeoutSeconds
        options.jsonPath = parsed.last("json")
        switch parsed.last("rooms") ?? "own" {
        case "own": options.sharedRoom = false
        case "one": options.sharedRoom = true
        case let other: throw CommandLineSpec.UsageError("--rooms must be own or one, not \(other)")
        }
        if let text = parsed.last("protocol") {
            guard let wire = WireProtocol(rawValue: text) else {
                throw CommandLineSpec.UsageError("--protocol must be line or http, not \(text)")
            }
            options.wireProtocol = wire
        }
        if options.wireProtocol == .http {
            if parsed.last("window").map({ $0 != "1" }) ?? false {
                throw CommandLineSpec.UsageError("--protocol http keeps one request in flight per connection: --window must be 1")
            }
            options.window = 1
        }
        return options
    }
}

/// What one writers run measured.
struct WritersResult: Codable {
    var label = ""
    var wireProtocol = "line"
    var writers = 0
    var window = 0
    var daemons = 0
    var sharedRoom = false
    var changes = 0
    var seconds = 0.0
    var changesPerSecond = 0.0
    /// CPU of `--pids` (summed) per acknowledged change, microseconds.
    var serverCPUMicrosPerChange: Double?
    var errors = 0
    var loadBefore = ""
}

/// Drives the writers: connect all, join rooms, warm up, then time until
/// `changes` acknowledgements in all. Single-threaded, on the loop.
final class WritersRun {
    private final class Writer {
        let connection: StreamConnection
        var scanner = LineScanner()
        var responses = HTTPResponseReader()
        var inFlight = 0
        var acknowledged = 0
        var screen = 0
        var room = ""
        init(connection: StreamConnection) { self.connection = connection }
    }

    private let loop: EventLoop
    private let options: WriterOptions
    private let finish: (Result<WritersResult, BenchError>) -> Void
    private var writers: [Writer] = []
    private var ready = 0
    private var timing = false
    private var timedAcknowledged = 0
    private var startedAt: UInt64 = 0
    private var cpuAtStart: UInt64 = 0
    private var errors = 0
    private var done = false
    private var result = WritersResult()

    init(loop: EventLoop, options: WriterOptions, finish: @escaping (Result<WritersResult, BenchError>) -> Void) {
        self.loop = loop
        self.options = options
        self.finish = finish
    }

    func start() {
        result.label = options.label
        result.wireProtocol = options.wireProtocol.rawValue
        result.writers = options.writers
        result.window = options.window
        result.daemons = options.ports.count
        result.sharedRoom = options.sharedRoom
        result.loadBefore = ProcStats.loadAverage()
        let deadline = LoopTimer(loop: loop)
        deadline.unref()
        deadline.start(afterMilliseconds: options.timeoutSeconds * 1000) { [unowned self] in
            self.fail("timed out after \(self.options.timeoutSeconds) s (\(self.timedAcknowledged) changes timed)")
        }
        for index in 0..<options.writers { connect(index) }
    }

    private func connect(_ index: Int) {
        let port = options.ports[index % options.ports.count]
        StreamConnection.connectTCP(loop: loop, host: options.host, port: port) { [unowned self] outcome in
            switch outcome {
            case .failure(let error):
                self.fail("writer \(index) cannot connect to port \(port): \(error)")
            case .success(let connection):
                let writer = Writer(connection: connection)
                self.writers.append(writer)
                connection.setNoDelay(true)
                connection.onEnd = { [unowned self] end in self.fail("a daemon closed writer \(index): \(end)") }
                if self.options.wireProtocol == .http {
                    connection.onRead = { [unowned self, unowned writer] bytes in self.readHTTP(writer, bytes) }
                    connection.startReading()
                    writer.room = self.options.sharedRoom ? "hbench" : "hbench\(index)"
                    // No JOIN over HTTP: the first POST creates the room.
                    self.ready += 1
                    if self.ready == self.options.writers { self.beginAll() }
                    return
                }
                connection.onRead = { [unowned self, unowned writer] bytes in self.read(writer, bytes) }
                connection.startReading()
                let room = self.options.sharedRoom ? "wbench" : "wbench\(index)"
                // The JOIN's STATE reply is not an acknowledgement; counted apart by its first byte.
                connection.write([Array("JOIN \(room)\n".utf8)])
            }
        }
    }

    private func read(_ writer: Writer, _ bytes: UnsafeRawBufferPointer) {
        var answered = 0
        var joined = false
        var failedLines = 0
        writer.scanner.scan(bytes) { b0, _ in
            switch b0 {
            case UInt8(ascii: "O"): answered += 1
            case UInt8(ascii: "S"): joined = true
            default: failedLines += 1
            }
        }
        // An ERR (unavailable, a retry limit) counts against the run; the change is not retried.
        errors += failedLines
        if joined {
            ready += 1
            if ready == options.writers { beginAll() }
            return
        }
        writer.inFlight -= failedLines
        acknowledge(writer, answered)
    }

    private func acknowledge(_ writer: Writer, _ answered: Int) {
        writer.inFlight -= answered
        writer.acknowledged += answered
        if timing {
            timedAcknowledged += answered
            if timedAcknowledged >= options.changes {
                complete()
                return
            }
        } else if ready == options.writers && writers.allSatisfy({ $0.acknowledged >= options.warmup }) {
            startTiming()
        }
        refill(writer)
    }

    /// HTTP: every whole `200` answer is one acknowledged change; anything else fails the run.
    private func readHTTP(_ writer: Writer, _ bytes: UnsafeRawBufferPointer) {
        var answered = 0
        var refused: Int?
        do {
            try writer.responses.read(bytes) { status in
                if status == 200 { answered += 1 } else if refused == nil { refused = status }
            }
        } catch {
            fail("unreadable HTTP response: \(error)")
            return
        }
        if let refused {
            fail("POST /rooms/\(writer.room) answered \(refused), not 200")
            return
        }
        acknowledge(writer, answered)
    }

    private func beginAll() {
        for writer in writers { refill(writer) }
    }

    private func startTiming() {
        timing = true
        startedAt = ProcStats.nowNanoseconds()
        cpuAtStart = options.pids.compactMap(ProcStats.schedCPUNanoseconds).reduce(0, +)
    }

    /// Tops the writer's window up in one write.
    private func refill(_ writer: Writer) {
        guard !done, writer.inFlight < options.window else { return }
        var bytes: [UInt8] = []
        while writer.inFlight < options.window {
            writer.inFlight += 1
            writer.screen = 1 - writer.screen
            switch options.wireProtocol {
            case .line:
                bytes += Array("SELECT \(Wire.screens[writer.screen])\n".utf8)
            case .http:
                let body = #"{"op":"select","screen":"\#(Wire.screens[writer.screen])"}"#
                bytes += Array(("POST /rooms/\(writer.room) HTTP/1.1\r\nHost: \(options.host)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
            }
        }
        writer.connection.write([bytes])
    }

    private func complete() {
        guard !done else { return }
        done = true
        let seconds = Double(ProcStats.nowNanoseconds() - startedAt) / 1e9
        result.changes = timedAcknowledged
        result.seconds = seconds
        result.changesPerSecond = Double(timedAcknowledged) / seconds
        if !options.pids.isEmpty {
            let cpu = options.pids.compactMap(ProcStats.schedCPUNanoseconds).reduce(0, +)
            result.serverCPUMicrosPerChange = Double(cpu &- cpuAtStart) / 1000 / Double(timedAcknowledged)
        }
        result.errors = errors
        finish(.success(result))
    }

    private func fail(_ message: String) {
        guard !done else { return }
        done = true
        finish(.failure(BenchError(description: message)))
    }
}

/// `navsync-bench writers ...` from main.
func runWriters(_ arguments: [String]) -> Never {
    let options: WriterOptions
    do {
        options = try WriterOptions.parse(arguments)
    } catch {
        die("writers: \(error)\n\(WriterOptions.usage)", status: 64)
    }
    var errors = 0
    let describe = { (result: WritersResult) -> String in
        errors = result.errors
        let cpu = result.serverCPUMicrosPerChange.map { ", server CPU \(format($0, 1)) us/change" } ?? ""
        let wire = result.wireProtocol == "http" ? " over HTTP (POST, one request in flight each)" : ""
        return "\(result.label)\(wire): \(result.writers) writers x window \(result.window) on \(result.daemons) daemon(s), "
            + "\(result.sharedRoom ? "one room" : "a room each"): \(Int(result.changesPerSecond.rounded())) changes/s"
            + "\(cpu), \(result.errors) errors"
    }
    let summary = runModeOrDie("writers", json: options.jsonPath, summary: describe) {
        WritersRun(loop: $0, options: options, finish: $1).start
    }
    print(summary)
    exit(errors == 0 ? 0 : 2)
}
