import XCTest
@testable import navsync_bench

/// The bench's WebSocket reader, which navsync-ws and navsync-wss share: TLS
/// hands it records' plaintext, so frames and the response head arrive
/// split anywhere.
final class FrameScannerTests: XCTestCase {
    private static let head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"

    /// An unmasked text frame from the server, with the 7-bit, 16-bit or 64-bit length.
    private static func frame(_ text: String, lengthBytes: Int = 0) -> [UInt8] {
        let payload = Array(text.utf8)
        var out: [UInt8] = [0x81]
        switch lengthBytes {
        case 2: out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        case 8: out += [127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        default: out.append(UInt8(payload.count))
        }
        return out + payload
    }

    private static let long = "EVENT 9 select /" + String(repeating: "x", count: 300)
    private static let stream: [UInt8] = Array(head.utf8)
        + frame("STATE 0 /green")
        + frame("EVENT 1 select /red")
        + frame("")
        + frame(long, lengthBytes: 2)
        + frame("ERR bad", lengthBytes: 8)
        + frame("EVENT 2 select /green")
    private static let expected = ["ST", "EV", "\0\0", "EV", "ER", "EV"]

    private func messages(chunk size: Int) -> [String] {
        var scanner = FrameScanner()
        var seen: [String] = []
        var start = 0
        while start < Self.stream.count {
            let end = min(start + size, Self.stream.count)
            Self.stream[start..<end].withUnsafeBytes { bytes in
                scanner.scan(bytes) { b0, b1 in seen.append(String(decoding: [b0, b1], as: UTF8.self)) }
            }
            start = end
        }
        return seen
    }

    func test_scan_wholeStream_reportsEachMessagesFirstTwoBytes() {
        XCTAssertEqual(messages(chunk: Self.stream.count), Self.expected)
    }

    func test_scan_byteAtATime_reportsTheSame() {
        XCTAssertEqual(messages(chunk: 1), Self.expected)
    }

    func test_scan_everyChunkSize_reportsTheSame() {
        for size in 2...40 {
            XCTAssertEqual(messages(chunk: size), Self.expected, "chunks of \(size)")
        }
    }

    /// Input a daemon should never send: the scanner reports only messages
    /// it has whole, and never reads past what it was given.
    func test_scan_malformedOrCutShort_reportsOnlyWholeMessages() {
        let head = Array(Self.head.utf8)
        let table: [(String, [UInt8], [String])] = [
            ("head never ends", Array("HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n".utf8) + Self.frame("EVENT 1"), []),
            ("frame cut in its payload", head + Array(Self.frame("EVENT 1 select /red").dropLast(3)), []),
            ("frame cut in its 16-bit length", head + Array(Self.frame(Self.long, lengthBytes: 2).prefix(3)), []),
            ("frame cut in its 64-bit length", head + Array(Self.frame("EVENT", lengthBytes: 8).prefix(6)), []),
            ("one-byte payload", head + Self.frame("E") + Self.frame("EVENT 2"), ["E\0", "EV"]),
            ("whole frame, then a cut one", head + Self.frame("EVENT 1") + Array(Self.frame("EVENT 2").prefix(4)), ["EV"]),
        ]
        for (name, bytes, expected) in table {
            for size in [bytes.count, 1, 7] {
                var scanner = FrameScanner()
                var seen: [String] = []
                var start = 0
                while start < bytes.count {
                    let end = min(start + size, bytes.count)
                    bytes[start..<end].withUnsafeBytes { chunk in
                        scanner.scan(chunk) { b0, b1 in seen.append(String(decoding: [b0, b1], as: UTF8.self)) }
                    }
                    start = end
                }
                XCTAssertEqual(seen, expected, "\(name), chunks of \(size)")
            }
        }
    }

    func test_scan_headOnly_reportsNothing() {
        var scanner = FrameScanner()
        var count = 0
        Array(Self.head.utf8).withUnsafeBytes { scanner.scan($0) { _, _ in count += 1 } }
        XCTAssertEqual(count, 0)
    }
}
