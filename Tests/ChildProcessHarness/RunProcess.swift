import Foundation
import XCTest

/// What a child run to completion printed, and how it ended.
public struct RunResult: Sendable {
    /// The exit status, or the signal's number for a child killed by one; -1
    /// for a child that outlived even SIGKILL.
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs a binary to completion with a bounded wait, capturing its output.
/// One still running after `timeout` is killed and fails the current test.
public func runProcess(_ path: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
                       timeout: TimeInterval = 20, file: StaticString = #filePath, line: UInt = #line) throws -> RunResult {
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
    LiveChildren.track(process)
    if let stdin {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
    }
    let ending = ChildExit.waitOrKill(process, seconds: timeout, what: "\(path) \(arguments)", file: file, line: line)
    out.fileHandleForReading.readabilityHandler = nil
    err.fileHandleForReading.readabilityHandler = nil
    outBox.append(out.fileHandleForReading.readDataToEndOfFile())
    errBox.append(err.fileHandleForReading.readDataToEndOfFile())
    return RunResult(status: ending?.status ?? -1, stdout: outBox.string, stderr: errBox.string)
}

/// Bytes appended from a pipe's handler thread and read by the test's.
public final class DataBox: @unchecked Sendable {  // data is only touched under lock
    private let lock = NSLock()
    private var data = Data()

    public init() {}

    public func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }

    public var string: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
