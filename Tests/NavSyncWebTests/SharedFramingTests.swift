import NavSyncCore
import NavSyncWeb
import XCTest

/// A room's turn framed once for all WebSocket watchers
/// (`WebSocketTextWriter.frames(ofLines:)`) must be byte for byte what each
/// connection's own framer makes of the same lines, however the lines
/// reached it.
final class SharedFramingTests: XCTestCase {
    private let writer = WebSocketTextWriter()

    /// Lines around every header-length boundary of RFC 6455 (125/126,
    /// 65535/65536), a blank one and UTF-8, each ended by `\n`.
    private let lines: [[UInt8]] = [
        Array("EVENT 1 push /red/blue:caf%C3%A9 caf\u{E9}".utf8), [],
        [UInt8](repeating: UInt8(ascii: "a"), count: 125), [UInt8](repeating: UInt8(ascii: "b"), count: 126),
        [UInt8](repeating: UInt8(ascii: "c"), count: 127), [UInt8](repeating: UInt8(ascii: "d"), count: 65_535),
        [UInt8](repeating: UInt8(ascii: "e"), count: 65_536), [UInt8](repeating: UInt8(ascii: "f"), count: 70_001),
        Array("STATE 9 /green".utf8),
    ]

    private var turn: [UInt8] { Array(lines.map { $0 + [UInt8(ascii: "\n")] }.joined()) }

    private func shared(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { writer.frames(ofLines: $0) }
    }

    /// What one connection's framer sends for the turn handed to it in `chunks`.
    private func perConnection(_ chunks: [ArraySlice<UInt8>]) -> [UInt8] {
        let framer = WebSocketFramer(maxMessageBytes: 1024, textWriter: writer)
        var splitter = WebSocketLines.OutputSplitter()
        var output: [UInt8] = []
        for chunk in chunks {
            splitter.forEachMessage(in: Array(chunk)) { framer.sendText($0) }
            output += framer.takeOutput()
        }
        return output
    }

    private func chunks(_ bytes: [UInt8], of size: Int) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: bytes.count, by: size).map { bytes[$0..<min($0 + size, bytes.count)] }
    }

    func testSharedFrames_sameBytesAsEachConnection_whole() {
        XCTAssertTrue(shared(turn) == perConnection([turn[...]]))
    }

    func testSharedFrames_sameBytesAsEachConnection_byteAtATime() {
        // The long lines make a byte-at-a-time run slow; the short ones cover every boundary of a line.
        let short = Array((lines.prefix(5) + [lines[8]]).map { $0 + [UInt8(ascii: "\n")] }.joined())
        XCTAssertTrue(shared(short) == perConnection(chunks(short, of: 1)))
    }

    func testSharedFrames_sameBytesAsEachConnection_manyLinesPerChunkAndLinesAcrossChunks() {
        let many = Array(repeating: Array("EVENT 7 select /green\n".utf8), count: 300).joined()
        let bytes = turn + Array(many)
        for size in [7, 100, 4_096, 70_000] {
            XCTAssertTrue(shared(bytes) == perConnection(chunks(bytes, of: size)), "chunks of \(size)")
        }
    }

    func testSharedFrames_rfc6455ServerHeaders_unmaskedFinText() {
        XCTAssertEqual(shared(Array("OK 12\n".utf8)), [0x81, 0x05] + Array("OK 12".utf8))
        XCTAssertEqual(shared(Array("\n".utf8)), [0x81, 0x00])
        let x126 = [UInt8](repeating: 0x78, count: 126)
        XCTAssertEqual(shared(x126 + [0x0A]), [0x81, 126, 0x00, 0x7E] + x126)
        let x65536 = [UInt8](repeating: 0x78, count: 65_536)
        XCTAssertEqual(shared(x65536 + [0x0A]), [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0] + x65536)
    }

    func testSharedFrames_decodeBackToTheLines() {
        var decoded: [[UInt8]] = []
        let frames = shared(turn)
        var at = 0
        while at < frames.count {
            XCTAssertEqual(frames[at], 0x81, "FIN text, no reserved bits")
            var length = Int(frames[at + 1])
            XCTAssertEqual(length & 0x80, 0, "server frames are not masked")
            at += 2
            if length == 126 {
                length = Int(frames[at]) << 8 | Int(frames[at + 1])
                at += 2
            } else if length == 127 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(frames[at + $1]) }
                at += 8
            }
            decoded.append(Array(frames[at..<at + length]))
            at += length
        }
        XCTAssertEqual(decoded, lines)
    }

    func testSharedFrames_bytesAfterTheLastNewline_areNotFramed() {
        XCTAssertEqual(shared(Array("OK 1\nhalf a li".utf8)), [0x81, 0x04] + Array("OK 1".utf8))
        XCTAssertEqual(shared([]), [])
    }

    func testSharedBytes_derivedForm_madeOncePerMaker_andChargedToTheSameLedger() {
        let ledger = SharedBytesLedger()
        let turn = SharedBytes(Array("OK 1\n".utf8), ledger: ledger)
        var made = 0
        let first = turn.derived(by: writer) { made += 1; return self.writer.frames(ofLines: $0) }
        let second = turn.derived(by: writer) { made += 1; return self.writer.frames(ofLines: $0) }
        XCTAssertTrue(first === second)
        XCTAssertEqual(made, 1)
        XCTAssertEqual(first.array, [0x81, 0x04] + Array("OK 1".utf8))
        first.queuedWriteStarted()
        first.queuedWriteStarted()
        XCTAssertEqual(ledger.heldBytes, 6 + SharedBytesLedger.blockOverhead, "two holders, counted once")
        first.queuedWriteEnded()
        first.queuedWriteEnded()
        XCTAssertEqual(ledger.heldBytes, 0)
        let other = turn.derived(by: WebSocketTextWriter()) { made += 1; return Array($0) }
        XCTAssertFalse(other === first)
        XCTAssertEqual(made, 2)
    }
}
