import XCTest
import NavSyncWeb

/// The framer frees wslay's context whenever the connection sits between
/// messages and makes a fresh one when bytes next arrive: whatever the
/// input's cut, the messages, answers and close codes are the same as with
/// one context kept for the whole connection.
final class WebSocketFramerReleaseTests: XCTestCase {
    private let writer = WebSocketTextWriter()

    /// A client frame, masked with a key that changes with `maskSeed`.
    private func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, maskSeed: UInt8 = 0) -> [UInt8] {
        let mask: [UInt8] = [0x5A &+ maskSeed, 0xC3, 0x17 &+ maskSeed, 0x9E]
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(0x80 | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    private func text(_ s: String, maskSeed: UInt8 = 0) -> [UInt8] { frame(0x1, Array(s.utf8), maskSeed: maskSeed) }

    private func closeCode(_ output: [UInt8]) -> UInt16? {
        guard output.count >= 4, output[output.count - 4] == 0x88, output[output.count - 3] == 2 else { return nil }
        return UInt16(output[output.count - 2]) << 8 | UInt16(output[output.count - 1])
    }

    /// Messages of every header size, a fragmented one with a ping inside,
    /// and a lone ping; `boundaries` are the offsets where a message (or
    /// control frame outside a message) ends.
    private func conversation() -> (input: [UInt8], messages: [WebSocketFramer.Event], pongs: [UInt8], boundaries: Set<Int>) {
        let medium = String(repeating: "m", count: 300)
        let large = String(repeating: "L", count: 70_000)
        let parts: [([UInt8], WebSocketFramer.Event?)] = [
            (text("HELLO wall-1"), .text(Array("HELLO wall-1".utf8))),
            (text(medium, maskSeed: 1), .text(Array(medium.utf8))),
            (frame(0x9, Array("hb".utf8), maskSeed: 2), nil),
            (frame(0x1, Array("SEL".utf8), fin: false, maskSeed: 3)
                + frame(0x9, [7], maskSeed: 4)
                + frame(0x0, Array("ECT ".utf8), fin: false, maskSeed: 5)
                + frame(0x0, Array("red".utf8), maskSeed: 6), .text(Array("SELECT red".utf8))),
            (text(large, maskSeed: 7), .text(Array(large.utf8))),
            (frame(0x1, [], maskSeed: 8), .text([])),
        ]
        var input: [UInt8] = []
        var boundaries: Set<Int> = [0]
        for (bytes, _) in parts {
            input += bytes
            boundaries.insert(input.count)
        }
        let pongs: [UInt8] = [0x8A, 0x02] + Array("hb".utf8) + [0x8A, 0x01, 7]
        return (input, parts.compactMap { $0.1 }, pongs, boundaries)
    }

    private func framer() -> WebSocketFramer { WebSocketFramer(maxMessageBytes: 100_000, textWriter: writer) }

    func test_newFramer_holdsNoContext_andSendingMakesNone() {
        let framer = framer()
        XCTAssertFalse(framer.holdsContext)
        framer.sendText(ArraySlice("OK 1".utf8))
        XCTAssertEqual(framer.takeOutput(), [0x81, 0x04] + Array("OK 1".utf8))
        XCTAssertFalse(framer.holdsContext, "outgoing messages are framed by the shared writer")
        XCTAssertFalse(framer.closeSent)
        XCTAssertFalse(framer.isFinished)
    }

    func test_wholeMessage_leavesNoContext_halfAMessageKeepsIt() {
        let framer = framer()
        let hello = text("HELLO")
        XCTAssertEqual(framer.receive(hello.prefix(3)), [])
        XCTAssertTrue(framer.holdsContext, "part of a header is held")
        XCTAssertEqual(framer.receive(hello.dropFirst(3)), [.text(Array("HELLO".utf8))])
        XCTAssertFalse(framer.holdsContext)
    }

    func test_conversationSplitInTwoAtEveryByte_deliversTheSameAcrossReleases() {
        let (input, messages, pongs, _) = conversation()
        // Every cut near the small frames, and a sample through the large one (its payload is uniform).
        let cuts = Array(0...700) + Array(stride(from: 701, through: input.count, by: 997)) + [input.count - 1, input.count]
        for cut in cuts {
            let framer = framer()
            let events = framer.receive(input[..<cut]) + framer.receive(input[cut...])
            XCTAssertEqual(events, messages, "cut at \(cut)")
            XCTAssertEqual(framer.takeOutput(), pongs, "cut at \(cut)")
            XCTAssertFalse(framer.holdsContext, "cut at \(cut)")
        }
    }

    func test_conversationByteAtATime_holdsTheContextExactlyWhileInsideAMessage() {
        let (input, messages, pongs, boundaries) = conversation()
        let framer = framer()
        var events: [WebSocketFramer.Event] = []
        var output: [UInt8] = []
        for (offset, byte) in input.enumerated() {
            events += framer.receive([byte])
            output += framer.takeOutput()
            let fed = offset + 1
            XCTAssertEqual(framer.holdsContext, !boundaries.contains(fed), "after \(fed) bytes")
        }
        XCTAssertEqual(events, messages)
        XCTAssertEqual(output, pongs)
    }

    func test_manyMessagesInOneRead_releaseOnceAtTheEnd() {
        let framer = framer()
        let input = text("A") + text("B", maskSeed: 1) + text("C", maskSeed: 2) + Array(text("D", maskSeed: 3).prefix(4))
        XCTAssertEqual(framer.receive(input), ["A", "B", "C"].map { .text(Array($0.utf8)) })
        XCTAssertTrue(framer.holdsContext, "D is half read")
        XCTAssertEqual(framer.receive(text("D", maskSeed: 3).dropFirst(4)), [.text(Array("D".utf8))])
        XCTAssertFalse(framer.holdsContext)
    }

    func test_fragmentedMessageSpanningReads_keepsItsContext_throughControlFrames() {
        let framer = framer()
        XCTAssertEqual(framer.receive(frame(0x1, Array("PUSH ".utf8), fin: false)), [])
        XCTAssertTrue(framer.holdsContext, "the first fragment is held in wslay")
        XCTAssertEqual(framer.receive(frame(0x9, [1, 2], maskSeed: 1)), [])
        XCTAssertEqual(framer.takeOutput(), [0x8A, 0x02, 1, 2])
        XCTAssertTrue(framer.holdsContext, "a ping between fragments does not end the message")
        XCTAssertEqual(framer.receive(frame(0x0, Array("blue".utf8), maskSeed: 2)), [.text(Array("PUSH blue".utf8))])
        XCTAssertFalse(framer.holdsContext)
    }

    func test_ourCloseAfterARelease_isSent_andTheHandshakeFinishes() {
        let framer = framer()
        XCTAssertEqual(framer.receive(text("GET")), [.text(Array("GET".utf8))])
        XCTAssertFalse(framer.holdsContext)
        framer.sendText(ArraySlice("BYE".utf8))
        framer.close(code: 1001)
        XCTAssertTrue(framer.holdsContext, "a close is queued")
        let output = framer.takeOutput()
        XCTAssertEqual(Array(output.prefix(5)), [0x81, 0x03] + Array("BYE".utf8))
        XCTAssertEqual(closeCode(output), 1001)
        XCTAssertTrue(framer.closeSent)
        XCTAssertFalse(framer.takesMessages)
        XCTAssertFalse(framer.isFinished, "waits for the peer's close")
        XCTAssertEqual(framer.receive(frame(0x8, [0x03, 0xE9], maskSeed: 1)), [.closeReceived(code: 1001)])
        XCTAssertTrue(framer.isFinished)
    }

    func test_peerCloseAfterARelease_isEchoed_andNothingIsReleasedAfter() {
        let framer = framer()
        _ = framer.receive(text("GET"))
        XCTAssertEqual(framer.receive(frame(0x8, [0x03, 0xE8], maskSeed: 1)), [.closeReceived(code: 1000)])
        XCTAssertEqual(closeCode(framer.takeOutput()), 1000)
        XCTAssertTrue(framer.closeSent)
        XCTAssertTrue(framer.isFinished)
        XCTAssertTrue(framer.holdsContext, "a closed connection keeps its state to the end")
        XCTAssertEqual(framer.receive(text("GET", maskSeed: 2)), [], "nothing is read after a close")
        XCTAssertTrue(framer.isFinished)
    }

    /// A fresh context still refuses what the first one refused, with the same code.
    func test_hostileFrameAfterARelease_closesWithItsCode() {
        let cases: [([UInt8], UInt16, String)] = [
            (frame(0x2, [1, 2, 3]), 1003, "binary message"),
            (frame(0x0, Array("x".utf8)), 1002, "continuation with nothing to continue"),
            (frame(0x1, [0xC3, 0x28]), 1007, "invalid UTF-8"),
            (frame(0x1, [UInt8](repeating: 0x61, count: 2000)), 1009, "message over the size limit"),
            ([0x81, 0x03] + Array("GET".utf8), 1002, "unmasked client frame"),
        ]
        for (hostile, code, why) in cases {
            let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
            XCTAssertEqual(framer.receive(text("GET", maskSeed: 9)), [.text(Array("GET".utf8))], why)
            XCTAssertFalse(framer.holdsContext, why)
            let events = framer.receive(hostile)
            XCTAssertFalse(events.contains { if case .text = $0 { return true } else { return false } }, why)
            XCTAssertEqual(closeCode(framer.takeOutput()), code, why)
            XCTAssertFalse(framer.takesMessages, why)
            XCTAssertTrue(framer.holdsContext, why)
        }
    }
}
