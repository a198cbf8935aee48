import Foundation
import Glibc

/// A `redis-server` of the test's own: a free loopback port, a fresh
/// temporary directory, AOF with `appendfsync always`, stopped by its PID.
/// Never a Redis the machine already runs.
public final class RedisServerProcess: @unchecked Sendable {  // log is guarded by lock; the rest is used by the test thread only
    public private(set) var port = 0
    public let directory: String
    private var process: Process?
    private var outputPipe: Pipe?
    private let lock = NSLock()
    private var logText = ""
    private let extraArguments: [String]

    /// Starts Redis and waits (bounded) until it accepts connections.
    public init(arguments: [String] = [], timeout: TimeInterval = 10) throws {
        directory = NSTemporaryDirectory() + "navsync-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        extraArguments = arguments
        var lastError: Error = RedisServerError.notReady("never started")
        for _ in 0..<5 {
            let candidate = Self.freeLoopbackPort()
            do {
                port = candidate
                try start(port: candidate, timeout: timeout)
                return
            } catch {
                lastError = error
                // Another process took the port between probe and bind: try another.
            }
        }
        throw lastError
    }

    /// `redis://127.0.0.1:PORT`
    public var url: String { "redis://127.0.0.1:\(port)" }

    public var pid: Int32 { process?.processIdentifier ?? 0 }

    public var isRunning: Bool { process?.isRunning ?? false }

    public var log: String {
        lock.lock()
        defer { lock.unlock() }
        return logText
    }

    /// Starts again on the same port and directory (so AOF is replayed).
    public func restart(timeout: TimeInterval = 10) throws {
        stop()
        try start(port: port, timeout: timeout)
    }

    /// SIGKILL: no shutdown, no final save.
    public func kill9() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, bounded wait, then SIGKILL.
    public func stop() {
        guard let process else { return }
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        outputPipe?.fileHandleForReading.readabilityHandler = nil
    }

    /// Stops Redis and removes its directory.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Runs `redis-cli` against this server and returns its output.
    public func cli(_ arguments: [String]) throws -> String {
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: try Self.binary("redis-cli"))
        cli.arguments = ["-h", "127.0.0.1", "-p", String(port)] + arguments
        let out = Pipe()
        cli.standardOutput = out
        cli.standardError = FileHandle.nullDevice
        try cli.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        cli.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
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
        self.process = process
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
            let apt = Process()
            apt.executableURL = URL(fileURLWithPath: "/usr/bin/apt-get")
            apt.arguments = ["install", "-y", "-qq", "redis-server"]
            apt.environment = ["DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
            try? apt.run()
            apt.waitUntilExit()
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/" + name) { return "/usr/bin/" + name }
        }
        throw RedisServerError.notInstalled(name)
    }

    /// A loopback port nobody was bound to a moment ago.
    public static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
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
