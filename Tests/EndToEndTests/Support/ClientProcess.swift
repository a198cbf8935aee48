import ChildProcessHarness
import Foundation
import RedisServerHarness
import XCTest

/// Runs `navsync` to completion with a bounded wait.
func navsync(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 20) throws -> RunResult {
    var env = ProcessInfo.processInfo.environment
    env["NAVSYNC_ADDR"] = nil
    env.merge(environment) { $1 }
    return try runProcess(Binaries.client, arguments, environment: env, timeout: timeout)
}

/// `printf 'LINE\n' | nc -N 127.0.0.1 PORT` through the real netcat; returns its output.
@discardableResult
func netcat(port: Int, _ lines: String...) throws -> String {
    let nc = ["/usr/bin/nc", "/bin/nc"].first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let nc else { throw NetcatMissing() }
    let result = try runProcess(nc, ["-N", "127.0.0.1", "\(port)"], stdin: lines.map { $0 + "\n" }.joined())
    return result.stdout
}

/// netcat-openbsd is one of the packages `make deps` installs; its absence is a failure, not a skip.
struct NetcatMissing: Error, CustomStringConvertible {
    var description: String { "nc is not installed (make deps installs netcat-openbsd)" }
}

/// A long-running process whose stdout is read line by line as it arrives
/// (for `navsync watch`). Stopped by PID.
final class StreamingProcess: @unchecked Sendable {  // output is guarded by lock
    let process = Process()
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""
    private let outPipe = Pipe()
    private let errPipe = Pipe()

    init(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outPipe
        process.standardError = errPipe
        outPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.outText += String(decoding: data, as: UTF8.self) }
        }
        errPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.errText += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        LiveChildren.track(process)
    }

    var stdout: String { lock.withLock { outText } }
    var stderr: String { lock.withLock { errText } }

    /// Complete stdout lines so far.
    var lines: [String] {
        var all = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        all.removeLast()  // the part after the last newline is not a line yet
        return all
    }

    /// Waits (bounded) until stdout holds at least `count` lines; returns them.
    @discardableResult
    func waitForLines(_ count: Int, timeout: TimeInterval = 20, file: StaticString = #filePath,
                      line: UInt = #line) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let current = lines
            if current.count >= count { return current }
            Thread.sleep(forTimeInterval: 0.005)
        }
        XCTFail("expected \(count) lines within \(timeout)s; stdout:\n\(stdout)\nstderr:\n\(stderr)", file: file, line: line)
        return lines
    }

    /// How it ended, once a wait saw it end. A child ChildExit reaped still
    /// reads as running to Foundation, and its PID may be reused: once this
    /// is set, nothing signals that PID again.
    private var ending: ChildExit.Ending?

    func signal(_ number: Int32) {
        if ending == nil { kill(process.processIdentifier, number) }
    }

    /// Waits (bounded) for the exit; nil if it is still running.
    func waitForExit(_ seconds: TimeInterval = 20) -> Int32? {
        if ending == nil { ending = ChildExit.wait(process, seconds: seconds) }
        return ending?.status
    }

    func stop() {
        if ending == nil && process.isRunning {
            ending = ChildExit.killOrReport(process, what: "\(process.executableURL?.path ?? "child")")
        }
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }
}

/// A TCP port nothing listens on, held so for the rest of the test process
/// (a released one could be given to another test's daemon meanwhile); a
/// daemon started with `--listen 127.0.0.1:port` can still take it.
func closedPort() -> Int { LoopbackPortReservation.heldClosedPort() }
