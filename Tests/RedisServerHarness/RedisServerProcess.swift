import ChildProcessHarness
import Foundation
import Glibc

/// A `redis-server` of the test's own: a loopback port held for it as long
/// as this object lives (so a restart finds it free), a fresh temporary
/// directory, AOF with `appendfsync always`, stopped by its PID. Never a
/// Redis the machine already runs.
public final class RedisServerProcess: @unchecked Sendable {  // log is guarded by lock; the rest is used by the test thread only
    public private(set) var port = 0
    public let directory: String
    private var process: Process?
    /// How the current process ended, once a wait saw it end. A child reaped
    /// by ChildExit still reads as running to Foundation, and its PID may be
    /// reused: once this is set, nothing signals that PID again.
    private var ending: ChildExit.Ending?
    private var outputPipe: Pipe?
    private let lock = NSLock()
    private var logText = ""
    private let extraArguments: [String]
    /// Holds the port between a stop and a restart, when another test's
    /// daemon binding port 0 could otherwise be given it.
    private var reservation: LoopbackPortReservation?

    /// Starts Redis and waits (bounded) until it accepts connections.
    public init(arguments: [String] = [], timeout: TimeInterval = 20) throws {
        directory = NSTemporaryDirectory() + "navsync-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        extraArguments = arguments
        var lastError: Error = RedisServerError.notReady("never started")
        for _ in 0..<5 {
            let held = LoopbackPortReservation()
            do {
                port = held.port
                reservation = held
                try start(port: held.port, timeout: timeout)
                return
            } catch {
                lastError = error
                reservation = nil
                // A start that failed for another reason: try once more on another port.
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastError
    }

    /// `redis://127.0.0.1:PORT`
    public var url: String { "redis://127.0.0.1:\(port)" }

    public var pid: Int32 { process?.processIdentifier ?? 0 }

    public var isRunning: Bool { ending == nil && (process?.isRunning ?? false) }

    public var log: String {
        lock.lock()
        defer { lock.unlock() }
        return logText
    }

    /// Starts again on the same port and directory (so AOF is replayed).
    public func restart(timeout: TimeInterval = 20) throws {
        stop()
        try start(port: port, timeout: timeout)
    }

    /// SIGKILL: no shutdown, no final save. Waits (bounded) for the end; a
    /// redis-server that outlives SIGKILL fails the test.
    public func kill9(file: StaticString = #filePath, line: UInt = #line) {
        guard let process, isRunning else { return }
        ending = ChildExit.killOrReport(process, what: "redis-server", file: file, line: line)
    }

    /// SIGTERM, bounded wait, then SIGKILL (reported if even that is not
    /// seen to end it). Always safe to call.
    public func stop(file: StaticString = #filePath, line: UInt = #line) {
        if let process, isRunning {
            kill(process.processIdentifier, SIGTERM)
            ending = ChildExit.wait(process, seconds: 5)
                ?? ChildExit.killOrReport(process, what: "redis-server ignoring SIGTERM", file: file, line: line)
        }
        outputPipe?.fileHandleForReading.readabilityHandler = nil
    }

    /// Stops Redis and removes its directory.
    public func remove(file: StaticString = #filePath, line: UInt = #line) {
        stop(file: file, line: line)
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Runs `redis-cli` against this server and returns its output; one
    /// that has not finished in `timeout` seconds is killed and fails the test.
    public func cli(_ arguments: [String], timeout: TimeInterval = 20,
                    file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try runProcess(try Self.binary("redis-cli"), ["-h", "127.0.0.1", "-p", String(port)] + arguments,
                       timeout: timeout, file: file, line: line).stdout
    }

    /// `redis-cli -x`: the last argument of the command is read from
    /// `stdin` (for values too large for a command line, or with any byte
    /// but NUL in them).
    public func cli(_ arguments: [String], stdin: String, timeout: TimeInterval = 30,
                    file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try runProcess(try Self.binary("redis-cli"), ["-h", "127.0.0.1", "-p", String(port), "-x"] + arguments,
                       stdin: stdin, timeout: timeout, file: file, line: line).stdout
    }

    private func start(port: Int, timeout: TimeInterval) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binary("redis-server"))
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                             "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                             "--daemonize", "no", "--logfile", "", "--protected-mode", "yes"] + extraArguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        lock.lock()
        logText = ""
        lock.unlock()
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.logText += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
        try process.run()
        LiveChildren.track(process)
        self.process = process
        ending = nil
        outputPipe = pipe
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if log.contains("Ready to accept connections") { return }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        stop()
        throw RedisServerError.notReady(log)
    }

    /// The path of a Redis binary; installs `redis-server` with apt when it is
    /// missing and we are root (a fresh CI machine), as `make deps` would.
    static func binary(_ name: String) throws -> String {
        for directory in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        if getuid() == 0 {
            // Downloading and unpacking may take minutes on a slow mirror; ten is plenty.
            _ = try? runProcess("/usr/bin/apt-get", ["install", "-y", "-qq", "redis-server"],
                                environment: ["DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
                                timeout: 600)
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/" + name) { return "/usr/bin/" + name }
        }
        throw RedisServerError.notInstalled(name)
    }
}

public enum RedisServerError: Error, CustomStringConvertible {
    case notReady(String)
    case notInstalled(String)

    public var description: String {
        switch self {
        case .notReady(let log): return "redis-server did not become ready; its output:\n\(log)"
        case .notInstalled(let name): return "\(name) is not installed (make deps installs redis-server)"
        }
    }
}
