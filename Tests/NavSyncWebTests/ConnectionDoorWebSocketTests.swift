import NavSyncCore
import NavSyncWeb
import XCTest

/// `ConnectionDoor` after a WebSocket upgrade: lines up, frames down, the
/// shared turn framed once for every watcher, and each close code.
final class ConnectionDoorWebSocketTests: XCTestCase {
    private var harness: DoorHarness!

    override func setUpWithError() throws {
        harness = try DoorHarness()
        XCTAssertEqual(harness.upgrade()?.status, 101)
    }

    override func tearDown() {
        harness?.tearDown()
        harness = nil
    }

    private var frames: [WebSocketWire.Frame] { WebSocketWire.frames(harness.stream.takeWritten()) }

    func test_upgrade_answers101WithTheAcceptKey_andCountsTheSocket() throws {
        let other = try DoorHarness()
        defer { other.tearDown() }
        let response = other.upgrade()
        XCTAssertEqual(response?.status, 101)
        XCTAssertEqual(response?.headers["sec-websocket-accept"], "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        XCTAssertEqual(response?.headers["upgrade"]?.lowercased(), "websocket")
        XCTAssertEqual(other.front.webSocketsOpen, 1)
        XCTAssertEqual(other.front.webSocketsTotal, 1)
    }

    func test_upgrade_framesSentWithTheRequest_areReadAsMessages() throws {
        let other = try DoorHarness()
        defer { other.tearDown() }
        let request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        other.stream.peerSends(Array(request.utf8) + WebSocketWire.text("GET red"))
        XCTAssertEqual(other.upText, "GET red\n")
    }

    func test_upgrade_fromAForeignOrigin_isRefused403() throws {
        let other = try DoorHarness()
        defer { other.tearDown() }
        let response = other.upgrade(extra: "Origin: https://evil.example\r\n")
        XCTAssertEqual(response?.status, 403)
        XCTAssertEqual(other.front.webSocketsOpen, 0)
    }

    func test_webSocket_messagesGoUpAsLines_wholeAndByteAtATime() {
        harness.stream.peerSends(WebSocketWire.text("GET red") + WebSocketWire.text("PUSH blue\nSELECT green\n"))
        XCTAssertEqual(harness.upText, "GET red\nPUSH blue\nSELECT green\n")
        for byte in WebSocketWire.text("GET caf\u{E9}") { harness.stream.peerSends([byte]) }
        XCTAssertEqual(harness.upText, "GET red\nPUSH blue\nSELECT green\nGET caf\u{E9}\n")
    }

    func test_webSocket_linesFromAbove_goDownAsOneTextFrameEach() {
        harness.door.write([Array("OK 1\nEVENT 2 push /a/b\n".utf8), Array("STATE 2 /a/b\n".utf8)])
        XCTAssertEqual(frames.map(\.text), ["OK 1", "EVENT 2 push /a/b", "STATE 2 /a/b"])
        XCTAssertEqual(frames.count, 0)
        // writeWithoutQueuing takes everything, framed the same way.
        XCTAssertEqual(harness.door.writeWithoutQueuing([Array("OK 2\n".utf8)]), 5)
        XCTAssertEqual(frames.map(\.text), ["OK 2"])
    }

    func test_webSocket_sharedTurn_isFramedOnceAndWrittenByReference_forEveryWatcher() throws {
        let other = try DoorHarness(sharing: harness)
        defer { other.tearDown() }
        XCTAssertEqual(other.upgrade()?.status, 101)
        let turn = SharedBytes(Array("EVENT 5 push /red\nEVENT 6 pop /\n".utf8))
        harness.door.write(shared: turn)
        XCTAssertEqual(other.door.writeWithoutQueuing(shared: turn), turn.count)
        XCTAssertEqual(frames.map(\.text), ["EVENT 5 push /red", "EVENT 6 pop /"])
        XCTAssertEqual(harness.stream.sharedWrites.count, 1)
        XCTAssertEqual(other.stream.sharedWrites.count, 1)
        XCTAssertTrue(harness.stream.sharedWrites[0] === other.stream.sharedWrites[0],
                      "both watchers write the one framed buffer")
    }

    func test_webSocket_sharedTurnAfterAPartialLine_isFramedByTheConnection() {
        harness.door.write([Array("EVENT 4 pu".utf8)])
        harness.door.write(shared: SharedBytes(Array("sh /x\nEVENT 5 pop /\n".utf8)))
        XCTAssertEqual(frames.map(\.text), ["EVENT 4 push /x", "EVENT 5 pop /"])
        XCTAssertEqual(harness.stream.sharedWrites.count, 0)
    }

    func test_webSocket_ping_isAnsweredWithAPong_countedAgainstTheHubsBound() {
        harness.stream.peerSends(WebSocketWire.client(0x9, Array("hi".utf8)))
        XCTAssertEqual(frames, [WebSocketWire.Frame(opcode: 0xA, payload: Array("hi".utf8))])
        XCTAssertEqual(harness.hub.outputsOutsideLines, 1)
        XCTAssertEqual(harness.up, [])
    }

    func test_webSocket_clientClose_isEchoed_andEndsTheSession() {
        harness.stream.peerSends(WebSocketWire.close(1000))
        XCTAssertEqual(frames.compactMap(\.closeCode), [1000])
        XCTAssertEqual(harness.hub.finishedBecause, ["WebSocket closed"])
        XCTAssertEqual(harness.front.webSocketsOpen, 0)
        // The link then half-closes; no second close frame goes out.
        harness.door.shutdownWrite()
        XCTAssertEqual(frames, [])
        XCTAssertTrue(harness.stream.writeShutDown)
    }

    func test_webSocket_sessionEnding_sendsTheCloseCodeOfEachReason_afterTheLastLines() throws {
        let cases: [(WebSessionEnd?, UInt16)] = [
            (nil, 1000), (.other, 1000), (.authFailed, 1008), (.tokenRevoked, 1008),
            (.shutdown, 1001), (.busy, 1013), (.transportError, 1011),
        ]
        for (end, code) in cases {
            let one = try DoorHarness()
            defer { one.tearDown() }
            XCTAssertEqual(one.upgrade()?.status, 101)
            one.hub.sessionEnd = end
            one.door.write([Array("BYE\n".utf8)])
            one.door.shutdownWrite()
            let sent = WebSocketWire.frames(one.stream.takeWritten())
            XCTAssertEqual(sent.map(\.opcode), [0x1, 0x8], "\(String(describing: end))")
            XCTAssertEqual(sent.last?.closeCode, code, "\(String(describing: end))")
            XCTAssertTrue(one.stream.writeShutDown)
            XCTAssertEqual(one.front.webSocketsOpen, 0)
            // Nothing more goes out once the close frame has.
            one.door.write([Array("OK 1\n".utf8)])
            XCTAssertEqual(one.stream.takeWritten(), [])
        }
    }

    func test_webSocket_messagesAfterShutdownWrite_goUpForTheLinkToDiscard_andReachNoFramer() {
        harness.door.shutdownWrite()
        _ = harness.stream.takeWritten()
        let text = WebSocketWire.text("GET red")
        harness.stream.peerSends(text)
        XCTAssertEqual(harness.up, text, "raw: the exchange is over")
        XCTAssertEqual(harness.stream.takeWritten(), [], "no pong, no echo")
    }

    func test_webSocket_doorClose_closesTheStreamBelow_andUncountsTheSocket() {
        harness.door.close()
        XCTAssertTrue(harness.stream.isClosed)
        XCTAssertEqual(harness.front.webSocketsOpen, 0)
    }
}
