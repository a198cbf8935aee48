import Foundation
import XCTest

/// A real `navsyncd` started for one test: port 0, ready when its
/// `listening on` line appears, always stopped by its PID.
final class DaemonProcess: @unchecked Sendable {  // log is guarded by logLock; the rest is touched by the test thread only
    let process = Process()
    private let stderrPipe = Pipe()
    private let logLock = NSLock()
    private var logText = ""
    private(set) var port: Int = 0
    let stateDirectory: String

    /// Starts the daemon and waits (bounded) for its listening line.
    /// `state`: nil = a fresh file in a temp directory; "none" = memory only.
    init(arguments extra: [String] = [], state: String? = nil, timeout: TimeInterval = 10,
         file: StaticString = #filePath, line: UInt = #line) throws {
        stateDirectory = NSTemporaryDirectory() + "navsync-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let statePath = state ?? (stateDirectory + "/state.json")
        process.executableURL = URL(fileURLWithPath: Binaries.daemon)
        var arguments = extra
        if !extra.contains(where: { $0.hasPrefix("--listen") }) { arguments += ["--listen", "127.0.0.1:0"] }
        if !extra.contains(where: { $0.hasPrefix("--state") }) { arguments += ["--state", statePath] }
        process.arguments = arguments
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.logLock.lock()
            self.logText += String(decoding: data, as: UTF8.self)
            self.logLock.unlock()
        }
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = Self.firstPort(in: log) {
                port = found
                return
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        stop()
        XCTFail("navsyncd did not report 'listening on' within \(timeout)s; log:\n\(log)", file: file, line: line)
        throw DaemonError.notReady(log)
    }

    /// Reuses a state file path: start a daemon on the same state.
    convenience init(statePath: String, arguments: [String] = []) throws {
        try self.init(arguments: arguments, state: statePath)
    }

    var statePath: String {
        if let i = process.arguments?.firstIndex(of: "--state"), let path = process.arguments?[i + 1] { return path }
        return stateDirectory + "/state.json"
    }

    var log: String {
        logLock.lock()
        defer { logLock.unlock() }
        return logText
    }

    var pid: Int32 { process.processIdentifier }

    static func firstPort(in log: String) -> Int? {
        guard let range = log.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) else { return nil }
        return Int(log[range].split(separator: ":").last!)
    }

    func connect(file: StaticString = #filePath, line: UInt = #line) throws -> LineClient {
        try LineClient(port: port)
    }

    /// Sends a signal and waits (bounded) for the exit; returns the status.
    @discardableResult
    func signal(_ signal: Int32, waitUpTo seconds: TimeInterval = 5) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(pid, signal)
        return waitForExit(seconds)
    }

    func waitForExit(_ seconds: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Always safe to call; kills by PID if still running.
    func stop() {
        if process.isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit(5)
        }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }

    enum DaemonError: Error { case notReady(String) }
}

/// Runs a binary to completion with a bounded wait, capturing its output.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

func runProcess(_ path: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
                timeout: TimeInterval = 10) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin == nil ? FileHandle.nullDevice : input
    let outBox = DataBox(), errBox = DataBox()
    out.fileHandleForReading.readabilityHandler = { outBox.append($0.availableData) }
    err.fileHandleForReading.readabilityHandler = { errBox.append($0.availableData) }
    try process.run()
    if let stdin {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
    }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTFail("\(path) \(arguments) did not finish within \(timeout)s")
    }
    process.waitUntilExit()
    out.fileHandleForReading.readabilityHandler = nil
    err.fileHandleForReading.readabilityHandler = nil
    outBox.append(out.fileHandleForReading.readDataToEndOfFile())
    errBox.append(err.fileHandleForReading.readDataToEndOfFile())
    return RunResult(status: process.terminationStatus, stdout: outBox.string, stderr: errBox.string)
}

final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }
    var string: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
