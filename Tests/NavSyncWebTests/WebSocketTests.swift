import XCTest
import NavSyncWeb

final class WebSocketTests: XCTestCase {
    private let writer = WebSocketTextWriter()

    func testAcceptKey_rfc6455Example() {
        XCTAssertEqual(WebSocketAcceptKey.make(forKey: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// A client frame: FIN, the opcode, masked with `mask`.
    private func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0,
                       mask: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        return bytes
    }

    private func text(_ s: String) -> [UInt8] { frame(0x1, Array(s.utf8)) }

    /// The close code of the server close frame that ends `output`: 0 for
    /// a close frame without a code, nil for none.
    private func closeCode(_ output: [UInt8]) -> UInt16? {
        if output.suffix(2) == [0x88, 0x00] { return 0 }
        guard output.count >= 4, output[output.count - 4] == 0x88, output[output.count - 3] == 2 else { return nil }
        return UInt16(output[output.count - 2]) << 8 | UInt16(output[output.count - 1])
    }

    func testFramer_textMessageWholeAndByteAtATime() {
        let input = text("GET") + text("PUSH blue caf\u{E9}")
        let whole = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        XCTAssertEqual(whole.receive(input), [.text(Array("GET".utf8)), .text(Array("PUSH blue caf\u{E9}".utf8))])
        let trickle = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        var events: [WebSocketFramer.Event] = []
        for byte in input { events += trickle.receive([byte]) }
        XCTAssertEqual(events, [.text(Array("GET".utf8)), .text(Array("PUSH blue caf\u{E9}".utf8))])
    }

    func testFramer_fragmentsAreReassembled() {
        let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        let input = frame(0x1, Array("SEL".utf8), fin: false) + frame(0x9, [1]) + frame(0x0, Array("ECT red".utf8))
        XCTAssertEqual(framer.receive(input), [.text(Array("SELECT red".utf8))])
        // The ping in between was answered with a pong carrying its payload.
        XCTAssertEqual(framer.takeOutput(), [0x8A, 0x01, 0x01])
    }

    func testFramer_sendsUnmaskedTextFrames() {
        let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        framer.sendText(ArraySlice("OK 1".utf8))
        XCTAssertEqual(framer.takeOutput(), [0x81, 0x04] + Array("OK 1".utf8))
        framer.sendText(ArraySlice(repeating: UInt8(ascii: "a"), count: 300))
        let long = framer.takeOutput()
        XCTAssertEqual(Array(long.prefix(4)), [0x81, 126, 0x01, 0x2C])
        XCTAssertEqual(long.count, 304)
    }

    func testFramer_closeHandshake() {
        let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        XCTAssertEqual(framer.receive(frame(0x8, [0x03, 0xE8])), [.closeReceived(code: 1000)])
        XCTAssertEqual(closeCode(framer.takeOutput()), 1000)
        XCTAssertTrue(framer.isFinished)

        let ours = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        ours.sendText(ArraySlice("BYE".utf8))
        ours.close(code: 1001)
        let output = ours.takeOutput()
        XCTAssertEqual(Array(output.prefix(5)), [0x81, 0x03] + Array("BYE".utf8))
        XCTAssertEqual(closeCode(output), 1001)
        XCTAssertFalse(ours.isFinished, "waits for the peer's close")
        _ = ours.receive(frame(0x8, [0x03, 0xE9]))
        XCTAssertTrue(ours.isFinished)
    }

    /// Each hostile input must close with this code and deliver no message.
    /// What wslay's frame layer refuses outright is closed without a code (0).
    func testFramer_malformedFramesClose() {
        let cases: [([UInt8], UInt16, String)] = [
            (frame(0x2, [1, 2, 3]), 1003, "binary message"),
            (frame(0x1, Array("GET".utf8), mask: nil), 1002, "unmasked client frame"),
            (frame(0x1, Array("GET".utf8), rsv: 4), 1002, "reserved bit RSV1"),
            (frame(0x1, Array("GET".utf8), rsv: 1), 1002, "reserved bit RSV3"),
            (frame(0x3, [0]), 1002, "reserved opcode"),
            (frame(0x9, [UInt8](repeating: 0, count: 126)), 0, "control frame over 125 bytes"),
            (frame(0x9, [1], fin: false), 0, "fragmented control frame"),
            (frame(0x0, Array("x".utf8)), 1002, "continuation with nothing to continue"),
            (frame(0x1, [0xC3, 0x28]), 1007, "invalid UTF-8 in a text frame"),
            (frame(0x8, [0x03, 0xEC]), 1002, "close with a reserved code (1004)"),
            (frame(0x8, [0x00, 0x10]), 1002, "close with code 16"),
            (frame(0x8, [0x03]), 0, "close with a one-byte body"),
            (frame(0x1, [UInt8](repeating: 0x61, count: 2000)), 1009, "message over the size limit"),
            ([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], 0, "64-bit length with the top bit set"),
        ]
        for (input, code, why) in cases {
            let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
            let events = framer.receive(input)
            XCTAssertFalse(events.contains { if case .text = $0 { return true } else { return false } }, why)
            XCTAssertEqual(closeCode(framer.takeOutput()), code, why)
        }
    }

    func testFramer_sixtyFourBitLengthPastTheLimitCloses() {
        let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        // Refused at the first payload byte, not after a terabyte.
        let header: [UInt8] = [0x81, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4]
        XCTAssertEqual(framer.receive(header + [0x61]), [])
        XCTAssertEqual(closeCode(framer.takeOutput()), 1009)
    }
}
