import Foundation
import Glibc
import NavSyncKit
import Observation

// navsync-kit-bench: what NavSyncKit costs, against a running navsyncd.
//   navsync-kit-bench --port P [--changes N] [--objects K] [--client PATH]
// 1. Latency: a plain TCP writer (what netcat does) sends `SELECT blue <i>`;
//    the clock stops when a SharedNavigation's observable `stack` shows it
//    (withObservationTracking on the main actor). N changes, one at a time.
//    With --client, the same for `navsync watch` (the terminal client's
//    path): the clock stops when its stdout line for the change arrives.
// 2. Footprint: K objects started in one process; resident memory and
//    threads per object, from /proc/self.
// Prints one JSON object on stdout.

struct Options {
    var port = 7878
    var changes = 1000
    var objects = 100
    var client: String?

    init() {
        var rest = CommandLine.arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatal("\(flag) needs a value") }
            switch flag {
            case "--port": port = Int(value) ?? 0
            case "--changes": changes = Int(value) ?? 0
            case "--objects": objects = Int(value) ?? 0
            case "--client": client = value
            default: fatal("unknown flag \(flag)")
            }
        }
        guard port > 0, changes > 0, objects > 0 else { fatal("--port, --changes and --objects want positive numbers") }
    }
}

func fatal(_ message: String) -> Never {
    FileHandle.standardError.write(Data("navsync-kit-bench: \(message)\n".utf8))
    exit(64)
}

/// A blocking TCP line writer, like `nc`: the bench's "other client".
final class LineWriter: Sendable {
    let fd: Int32

    init(port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { fatal("cannot connect to 127.0.0.1:\(port)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // Replies are never read: drain them on a thread so the daemon never holds them back.
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while read(fd, &buffer, buffer.count) > 0 {}
        }.start()
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func summary(_ samples: [Double]) -> [String: Double] {
    let sorted = samples.sorted()
    return ["p50_us": percentile(sorted, 0.5), "p99_us": percentile(sorted, 0.99), "max_us": sorted.last ?? 0]
}

func procStatus(_ key: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
    return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0
}

/// Resolves once `navigation.stack` shows `data` on top, observed as a view would.
@MainActor
func shown(_ data: String, on navigation: SharedNavigation<NavEntry>) async {
    while navigation.stack.last?.data != data {
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            withObservationTracking {
                _ = navigation.stack
            } onChange: {
                Task { @MainActor in resume.resume() }
            }
        }
    }
}

@MainActor
func libraryLatency(_ options: Options) async throws -> [Double] {
    let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(options.port)", room: "kit-bench")
    try await navigation.start()
    let writer = LineWriter(port: options.port)
    writer.send("JOIN kit-bench")
    var samples: [Double] = []
    for i in 0..<(options.changes + 50) {
        let data = "\(i)"
        let started = nanoseconds()
        writer.send("SELECT blue \(data)")
        await shown(data, on: navigation)
        if i >= 50 { samples.append(Double(nanoseconds() - started) / 1000) }  // the first 50 warm up
    }
    await navigation.stop()
    return samples
}

/// The same measurement for `navsync watch`: the clock stops at its stdout line.
func terminalClientLatency(_ options: Options, client: String) throws -> [Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: client)
    process.arguments = ["--connect", "127.0.0.1:\(options.port)", "--room", "kit-bench-cli", "watch"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
        // SIGKILL, not terminate(): a child spawned from a Swift concurrency thread inherits
        // that thread's blocked signals, SIGTERM included, so `navsync watch` would not hear it.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
    let reader = output.fileHandleForReading
    var pending = Data()
    func nextLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                return line
            }
            let chunk = reader.availableData
            if chunk.isEmpty { return nil }
            pending += chunk
        }
    }
    _ = nextLine()  // the snapshot line
    let writer = LineWriter(port: options.port)
    writer.send("JOIN kit-bench-cli")
    var samples: [Double] = []
    for i in 0..<(options.changes + 50) {
        let started = nanoseconds()
        writer.send("SELECT blue \(i)")
        while let line = nextLine(), !line.hasSuffix(":\(i)") {}
        if i >= 50 { samples.append(Double(nanoseconds() - started) / 1000) }
    }
    return samples
}

@MainActor
func footprint(_ options: Options) async throws -> [String: Double] {
    let baseRSS = procStatus("VmRSS"), baseThreads = procStatus("Threads")
    var objects: [SharedNavigation<NavEntry>] = []
    for index in 0..<options.objects {
        let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(options.port)", room: "kit-bench-\(index % 8)")
        try await navigation.start()
        objects.append(navigation)
    }
    let rss = procStatus("VmRSS"), threads = procStatus("Threads")
    for navigation in objects { await navigation.stop() }
    try await Task.sleep(for: .milliseconds(200))
    return [
        "objects": Double(options.objects),
        "rss_kib_per_object": Double(rss - baseRSS) / Double(options.objects),
        "threads_per_object": Double(threads - baseThreads) / Double(options.objects),
        "threads_after_stop": Double(procStatus("Threads") - baseThreads),
    ]
}

let options = Options()
do {
    var report: [String: Any] = ["changes": options.changes]
    report["library"] = summary(try await libraryLatency(options))
    if let client = options.client {
        report["terminal_client_watch"] = summary(try terminalClientLatency(options, client: client))
    }
    report["footprint"] = try await footprint(options)
    let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .prettyPrinted])
    print(String(decoding: json, as: UTF8.self))
} catch {
    fatal("\(error)")
}
