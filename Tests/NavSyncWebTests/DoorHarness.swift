import Glibc
import NavSyncCore
import NavSyncWeb
import UVLoop
import XCTest

/// One connection through a `ConnectionDoor`, with nothing real around it:
/// a `MemoryByteStream` below, a `FakeWebHub` behind the port, and above a
/// recorder of what the door hands up (the link's place). The loop is real
/// only for the head timer; a test runs it with `runLoop(until:)`.
final class DoorHarness {
    let loop: EventLoop
    let front: WebFrontDoor
    let stream = MemoryByteStream()
    let hub = FakeWebHub()
    let door: ConnectionDoor
    /// Bytes the door handed up: the line protocol's, or WebSocket messages' lines.
    private(set) var up: [UInt8] = []
    private(set) var endsUp = 0
    private(set) var drainsUp = 0
    private let ownsLoop: Bool

    /// - Parameter sharing: another harness whose loop and front door this
    ///   connection shares (two connections of one daemon).
    init(headTimeoutMilliseconds: UInt64 = WebFrontDoor.defaultHeadTimeoutMilliseconds,
         eventPingMilliseconds: UInt64 = 15_000, allowedOrigins: [String] = [], sharing other: DoorHarness? = nil) throws {
        loop = try other?.loop ?? EventLoop()
        ownsLoop = other == nil
        front = other?.front ?? WebFrontDoor(access: WebAccess(allowedOrigins: allowedOrigins), page: Array("<p>the page</p>".utf8),
                                             maxLineBytes: 4096, headTimeoutMilliseconds: headTimeoutMilliseconds,
                                             eventPingMilliseconds: eventPingMilliseconds)
        door = ConnectionDoor(over: stream, door: front, hub: hub, loop: loop)
        door.onRead = { [unowned self] bytes in self.up += Array(bytes) }
        door.onEnd = { [unowned self] _ in self.endsUp += 1 }
        door.onWriteQueueDrained = { [unowned self] in self.drainsUp += 1 }
        door.startReading()
    }

    /// Closes the door (its timer with it) and the loop.
    func tearDown() {
        door.close()
        if ownsLoop { loop.shutdown() }
    }

    var upText: String { String(decoding: up, as: UTF8.self) }

    /// Runs the loop until `condition` holds, at most `seconds` (a bound
    /// against a hang, not a measure of speed).
    func runLoop(until condition: () -> Bool, seconds: UInt64 = 20) {
        let watchdog = LoopTimer(loop: loop)
        var expired = false
        watchdog.start(afterMilliseconds: seconds * 1000) { expired = true }
        // Without waiting for IO: a turn that ran a timer would otherwise
        // sleep in the poll phase until the next timer (the watchdog).
        while !condition() && !expired {
            loop.runOnce(nowait: true)
            usleep(1_000)
        }
        watchdog.close()
    }

    /// Sends a WebSocket upgrade and returns the 101 response.
    func upgrade(extra: String = "") -> HTTPWire.Response? {
        stream.peerSends("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\(extra)\r\n")
        return HTTPWire.responses(stream.takeWritten()).first
    }
}
