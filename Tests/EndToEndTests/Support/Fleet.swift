import RedisServerHarness
import XCTest

/// A Redis of the test's own and `count` daemons on it, for the backplane's
/// end-to-end tests; `stop()` ends them all.
struct Fleet {
    let redis: RedisServerProcess
    let daemons: [DaemonProcess]

    /// Whatever has started is stopped by its PID before an error leaves here.
    /// `arguments` are given to every daemon, beside `--backplane`.
    init(_ count: Int, arguments: [String] = []) throws {
        redis = try RedisServerProcess()
        var started: [DaemonProcess] = []
        do {
            for _ in 0..<count { started.append(try DaemonProcess(arguments: ["--backplane", redis.url] + arguments)) }
        } catch {
            started.forEach { $0.stop() }
            redis.remove()
            throw error
        }
        daemons = started
    }

    /// A connection to daemon `index` watching the untouched main room.
    func watcher(on index: Int, file: StaticString = #filePath, line: UInt = #line) throws -> LineClient {
        let watcher = try daemons[index].connect()
        XCTAssertEqual(try watcher.request("WATCH"), "STATE 0 /red", file: file, line: line)
        return watcher
    }

    func stop() {
        daemons.forEach { $0.stop() }
        redis.remove()
    }
}
