import ChildProcessHarness
import Foundation
import XCTest

/// A real `navsyncd` started for one test: port 0, ready when its
/// `listening on` line appears, always stopped by its PID.
final class DaemonProcess: @unchecked Sendable {  // log is guarded by logLock; the rest is touched by the test thread only
    let process = Process()
    private let stderrPipe = Pipe()
    private let logLock = NSLock()
    private var logText = ""
    /// The port of the first plain TCP listener, as the daemon logged it.
    private(set) var port: Int = 0
    /// The port of the first TLS listener (`listening on tls://…`), 0 without one.
    private(set) var tlsPort: Int = 0
    /// Every address from the `listening on` lines: `127.0.0.1:40123`, `[::1]:40124`, `unix:/path`.
    private(set) var listeningAddresses: [String] = []
    let stateDirectory: String
    /// True when this object made `stateDirectory` (no state path was given),
    /// so it is this object's to remove.
    private let ownsStateDirectory: Bool

    /// Passed as `state`: no `--state` at all, so the daemon uses its default path.
    static let defaultState = "(the daemon's default)"

    /// Starts the daemon and waits (bounded) for its listening line.
    /// `state`: nil = a fresh file in a temp directory; "none" = memory only;
    /// `defaultState` = no `--state` flag.
    /// `environment`: variables to set on top of the test's own.
    /// `shellSetup`: a shell command run first, e.g. `ulimit -f 8`; the
    /// shell then execs the daemon, which keeps the shell's PID.
    init(arguments extra: [String] = [], state: String? = nil, environment: [String: String] = [:],
         shellSetup: String? = nil, timeout: TimeInterval = 20,
         file: StaticString = #filePath, line: UInt = #line) throws {
        stateDirectory = NSTemporaryDirectory() + "navsync-e2e-" + UUID().uuidString
        // Only a daemon given no state file gets a directory of its own.
        ownsStateDirectory = state == nil
        if ownsStateDirectory {
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        }
        let statePath = state ?? (stateDirectory + "/state.json")
        process.executableURL = URL(fileURLWithPath: Binaries.daemon)
        var arguments = extra
        // A daemon given only TLS listeners is a TLS-only daemon: no plain one is added.
        if !extra.contains(where: { $0.hasPrefix("--listen") || $0.hasPrefix("--tls-listen") }) {
            arguments += ["--listen", "127.0.0.1:0"]
        }
        // A backplane daemon keeps no state file (--state with it is refused).
        if state != Self.defaultState && !extra.contains(where: { $0.hasPrefix("--state") || $0.hasPrefix("--backplane") }) {
            arguments += ["--state", statePath]
        }
        if let shellSetup {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellSetup + "; exec \"$0\" \"$@\"", Binaries.daemon] + arguments
        } else {
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
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
        let expected = Self.listenerCount(arguments)
        try process.run()
        LiveChildren.track(process)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let addresses = Self.listeningAddresses(in: log)
            if addresses.count >= expected {
                listeningAddresses = addresses
                port = addresses.lazy.filter { !$0.hasPrefix("tls://") }.compactMap(Self.tcpPort).first ?? 0
                tlsPort = addresses.lazy.filter { $0.hasPrefix("tls://") }.compactMap(Self.tcpPort).first ?? 0
                return
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        stop()
        XCTFail("navsyncd did not report \(expected) 'listening on' lines within \(timeout)s; log:\n\(log)",
                file: file, line: line)
        throw DaemonError.notReady(log)
    }

    /// One `listening on` line per `--listen` and `--tls-listen` (the default counts as one) and per `--unix`.
    private static func listenerCount(_ arguments: [String]) -> Int {
        func count(_ flag: String) -> Int { arguments.filter { $0 == flag || $0.hasPrefix(flag + "=") }.count }
        return max(1, count("--listen") + count("--tls-listen")) + min(1, count("--unix"))
    }

    /// Reuses a state file path ("none" = memory only): start a daemon on the
    /// same state. `shellPrefix` is run first, as `shellSetup` above.
    convenience init(statePath: String, arguments: [String] = [], shellPrefix: String? = nil,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        try self.init(arguments: arguments, state: statePath, shellSetup: shellPrefix, file: file, line: line)
    }

    var statePath: String {
        if let arguments = process.arguments, let i = arguments.firstIndex(of: "--state"), i + 1 < arguments.count {
            return arguments[i + 1]
        }
        return stateDirectory + "/state.json"
    }

    var log: String {
        logLock.lock()
        defer { logLock.unlock() }
        return logText
    }

    var pid: Int32 { process.processIdentifier }

    /// From complete lines only: a line still arriving might show half a port.
    static func listeningAddresses(in log: String) -> [String] {
        let complete = log[..<(log.lastIndex(of: "\n") ?? log.startIndex)]
        return complete.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "listening on ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
    }

    /// The port of `127.0.0.1:P` or `[::1]:P`; nil for a Unix socket.
    static func tcpPort(_ address: String) -> Int? {
        guard !address.hasPrefix("unix:"), let colon = address.lastIndex(of: ":") else { return nil }
        return Int(address[address.index(after: colon)...])
    }

    func connect(receiveBufferBytes: Int? = nil) throws -> LineClient {
        try LineClient(port: port, receiveBufferBytes: receiveBufferBytes)
    }

    /// The daemon's resident set size from /proc, in KiB.
    var residentKilobytes: Int? {
        let kib = residentKiB
        return kib < 0 ? nil : kib
    }

    /// True once the process has ended by calling exit (not by a signal).
    var exitedNormally: Bool { (ending ?? ChildExit.wait(process, seconds: 0)).map { !$0.bySignal } ?? false }

    var isRunning: Bool { ending == nil && process.isRunning }

    /// How it ended, once a wait has seen it end.
    private var ending: ChildExit.Ending?

    /// Sends a signal and waits (bounded) for the exit; returns the status,
    /// nil while still running. A death by signal reads as 128 + signal.
    @discardableResult
    func signal(_ signal: Int32, waitUpTo seconds: TimeInterval = 20) -> Int32? {
        if isRunning { kill(pid, signal) }
        return waitForExit(seconds)
    }

    func waitForExit(_ seconds: TimeInterval) -> Int32? {
        if ending == nil { ending = ChildExit.wait(process, seconds: seconds) }
        return ending?.shellStatus
    }

    /// Open descriptors of the daemon, from /proc.
    var openFileCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Resident set size in KiB, from /proc.
    var residentKiB: Int { Hardening.statusField("VmRSS", pid: pid) }
    /// Peak resident set size in KiB.
    var peakResidentKiB: Int { Hardening.statusField("VmHWM", pid: pid) }

    /// Always safe to call. Ends a daemon still running the way an operator
    /// would, with SIGTERM, and by PID; SIGKILL only if it has not exited in
    /// time. The clean exit matters for the ASan build: LeakSanitizer reports
    /// only from a process that exits, so a daemon that has to be killed
    /// could hide a leak, and under the sanitizers that fails the test.
    func stop() {
        if isRunning {
            // An ASan daemon's leak check walks its whole heap before exiting.
            let grace: TimeInterval = Hardening.sanitized ? 30 : 5
            kill(pid, SIGTERM)
            if waitForExit(grace) == nil {
                kill(pid, SIGKILL)
                _ = waitForExit(5)
                if Hardening.sanitized {
                    XCTFail("navsyncd did not exit within \(Int(grace)) s of SIGTERM, so LeakSanitizer could not report")
                }
            }
        }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
    }

    /// Nothing can reach an owned directory once this object is gone (a
    /// restart on the same state passes its own path), so it goes with it;
    /// every test run used to leave one behind per daemon.
    deinit {
        stop()
        if ownsStateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }

    enum DaemonError: Error { case notReady(String) }
}
