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
         eventPingMilliseconds: UInt64 = 15_000, sharing other: DoorHarness? = nil) throws {
        loop = try other?.loop ?? EventLoop()
        ownsLoop = other == nil
        front = other?.front ?? WebFrontDoor(access: WebAccess(allowedOrigins: []), page: Array("<p>the page</p>".utf8),
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
    func runLoop(until condition: () -> Bool, seconds: UInt64 = 10) {
        let watchdog = LoopTimer(loop: loop)
        var expired = false
        watchdog.start(afterMilliseconds: seconds * 1000) { expired = true }
        while !condition() && !expired { loop.runOnce(nowait: false) }
        watchdog.close()
    }

    /// Sends a WebSocket upgrade and returns the 101 response.
    func upgrade(extra: String = "") -> HTTPWire.Response? {
        stream.peerSends("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\(extra)\r\n")
        return HTTPWire.responses(stream.takeWritten()).first
    }
}

/// What goes over the wire in the door's tests, written and read the way a
/// client would.
enum HTTPWire {
    struct Response {
        var status: Int
        /// Lowercased names.
        var headers: [String: String]
        var body: [UInt8]
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    static func get(_ path: String, _ extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:7878\r\n\(extra)\r\n"
    }

    /// The responses in `bytes`, in order (bodies by `Content-Length`; a
    /// 101 has none); bytes after the last whole one are ignored.
    static func responses(_ bytes: [UInt8]) -> [Response] {
        var found: [Response] = []
        var at = 0
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while at < bytes.count {
            guard let headEnd = (at...max(at, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == end })
            else { break }
            let lines = String(decoding: bytes[at..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusWords = lines[0].split(separator: " ")
            guard statusWords.count >= 2, let status = Int(statusWords[1]) else { break }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = status == 101 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = headEnd + 4
            guard bodyStart + length <= bytes.count else { break }
            found.append(Response(status: status, headers: headers, body: Array(bytes[bodyStart..<bodyStart + length])))
            at = bodyStart + length
        }
        return found
    }
}

/// WebSocket frames as a client writes them (masked) and reads them.
enum WebSocketWire {
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status code.
        var closeCode: UInt16? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return UInt16(payload[0]) << 8 | UInt16(payload[1])
        }
    }

    /// A masked client frame (payloads under 64 KiB).
    static func client(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    static func text(_ message: String) -> [UInt8] { client(0x1, Array(message.utf8)) }

    static func close(_ code: UInt16) -> [UInt8] { client(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    /// The server's (unmasked) frames in `bytes`.
    static func frames(_ bytes: [UInt8]) -> [Frame] {
        var found: [Frame] = []
        var at = 0
        while at + 2 <= bytes.count {
            var length = Int(bytes[at + 1] & 0x7F)
            var start = at + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            found.append(Frame(opcode: bytes[at] & 0x0F, payload: Array(bytes[start..<start + length])))
            at = start + length
        }
        return found
    }
}
