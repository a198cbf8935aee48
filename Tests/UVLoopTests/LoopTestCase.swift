import Glibc
import UVLoop
import XCTest

/// Base class for tests that need a loop: a fresh `EventLoop` per test, shut down afterwards,
/// and `spin` to run it until a condition holds or a deadline passes.
class LoopTestCase: XCTestCase {
    /// Set up before every test; shut down after it.
    private(set) var loop: EventLoop!

    override class func setUp() {
        super.setUp()
        // As the daemon does in main: a write to a reset socket must fail with EPIPE, not kill the process.
        EventLoop.ignoreSIGPIPE()
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        loop = try EventLoop()
    }

    override func tearDown() {
        loop.shutdown()
        loop = nil
        super.tearDown()
    }

    /// Runs the loop until `done()` is true, failing the test if that takes longer than `seconds`.
    ///
    /// The deadline is wall-clock time. A one-shot timer would not do: libuv timers count from the
    /// loop's cached clock, which is stale after slow test setup, so the timer could fire at once.
    func spin(
        _ what: String, seconds: Double = 20, file: StaticString = #filePath, line: UInt = #line,
        until done: () -> Bool
    ) {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let tick = LoopTimer(loop: loop)
        tick.start(afterMilliseconds: 10, repeatMilliseconds: 10) {}  // bounds each runOnce
        while !done(), ContinuousClock.now < deadline {
            loop.runOnce(nowait: false)
        }
        tick.close()
        if !done() {
            XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line)
        }
    }

    /// `loop.run()` for a test whose point is that `run` returns by itself
    /// (nothing keeps the loop alive, or something stops it), with a
    /// watchdog: past `seconds` the loop is stopped and the test fails,
    /// instead of hanging the whole run. The watchdog's timer is unref'd,
    /// so it never keeps the loop alive itself.
    func runBounded(_ what: String, seconds: Double = 20, file: StaticString = #filePath, line: UInt = #line) {
        if !runUnderWatchdog(seconds: seconds) {
            XCTFail("loop.run() did not return within \(seconds) s: \(what)", file: file, line: line)
        }
    }

    /// `loop.run()`, stopped by an unref'd timer after `seconds`; true when it returned by itself.
    func runUnderWatchdog(seconds: Double) -> Bool {
        var fired = false
        let watchdog = LoopTimer(loop: loop)
        watchdog.start(afterMilliseconds: UInt64(seconds * 1000)) { [loop] in
            fired = true
            loop?.stop()
        }
        watchdog.unref()
        loop.run()
        watchdog.close()
        return !fired
    }

    /// Runs the loop for `milliseconds` of wall-clock time, for checks that something does NOT happen.
    func idle(milliseconds: Int) {
        let end = ContinuousClock.now + .milliseconds(milliseconds)
        spin("idle", seconds: Double(milliseconds) / 1000 + 5) { ContinuousClock.now >= end }
    }

    /// A TCP connection over loopback: the accepted side and the connecting side.
    func connectedPair(host: String = "127.0.0.1") throws -> (server: StreamConnection, client: StreamConnection) {
        var accepted: StreamConnection?
        let listener = try StreamListener.tcp(loop: loop, host: host, port: 0) { accepted = $0 }
        defer { listener.close() }
        var connected: Result<StreamConnection, UVError>?
        StreamConnection.connectTCP(loop: loop, host: host, port: listener.port) { connected = $0 }
        spin("connection") { accepted != nil && connected != nil }
        return (try XCTUnwrap(accepted), try XCTUnwrap(connected).get())
    }

    /// A path for a temporary file or socket, unique to this process and call, short enough for sun_path.
    func temporaryPath(_ name: String) -> String {
        LoopTestCase.counter += 1
        let path = "/tmp/uvloop-\(getpid())-\(LoopTestCase.counter)-\(name)"
        addTeardownBlock { unlink(path) }
        return path
    }

    // Tests run one at a time on the main thread; the counter is only touched there.
    nonisolated(unsafe) private static var counter = 0
}

/// Collects what a connection reads and how its input ended.
final class Inbox {
    var bytes: [UInt8] = []
    var reads = 0
    var ends: [StreamEnd] = []

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Attaches to `connection` and starts reading.
    init(_ connection: StreamConnection, startReading: Bool = true) {
        connection.onRead = { chunk in
            self.bytes.append(contentsOf: chunk)
            self.reads += 1
        }
        connection.onEnd = { end in self.ends.append(end) }
        if startReading { connection.startReading() }
    }
}

extension StreamConnection {
    /// Writes a string as one chunk.
    func write(_ text: String) {
        write([Array(text.utf8)])
    }
}
