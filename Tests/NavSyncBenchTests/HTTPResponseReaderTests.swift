import XCTest
@testable import navsync_bench

final class HTTPResponseReaderTests: XCTestCase {
    private static let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nETag: \"4\"\r\n\r\n{\"rev\":4}\r\n"
    private static let conflict = "HTTP/1.1 412 Precondition Failed\r\ncontent-length: 0\r\n\r\n"

    /// Feeds `text` in chunks of `size` bytes and collects the statuses reported.
    private func statuses(_ text: String, chunk size: Int) throws -> [Int] {
        var reader = HTTPResponseReader()
        var seen: [Int] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(start + size, bytes.count)
            try bytes[start..<end].withUnsafeBytes { chunk in
                try reader.read(chunk) { seen.append($0) }
            }
            start = end
        }
        return seen
    }

    func test_read_wholeResponse_reportsItsStatusOnce() throws {
        XCTAssertEqual(try statuses(Self.ok, chunk: 4096), [200])
    }

    func test_read_byteAtATime_reportsOnlyOnceTheBodyIsIn() throws {
        var reader = HTTPResponseReader()
        var seen: [Int] = []
        let bytes = Array(Self.ok.utf8)
        for (index, byte) in bytes.enumerated() {
            try [byte].withUnsafeBytes { try reader.read($0) { seen.append($0) } }
            XCTAssertEqual(seen.count, index == bytes.count - 1 ? 1 : 0, "after byte \(index)")
        }
        XCTAssertEqual(seen, [200])
    }

    func test_read_manyPerChunk_reportsEachInOrder() throws {
        let stream = Self.ok + Self.conflict + Self.ok + Self.ok
        for size in [1, 2, 3, 7, 64, stream.utf8.count] {
            XCTAssertEqual(try statuses(stream, chunk: size), [200, 412, 200, 200], "chunk \(size)")
        }
    }

    func test_read_headWithoutBody_isNotCounted() throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"rev\""
        XCTAssertEqual(try statuses(head, chunk: 5), [])
    }

    func test_read_malformedHeads_throw() {
        let cases: [(String, String)] = [
            ("no content length", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"),
            ("chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            ("negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
            ("signed length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n"),
            ("empty length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n"),
            ("two lengths that differ", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            ("not HTTP", "SMTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            ("status not a number", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"),
            ("status out of range", "HTTP/1.1 999 Nope\r\nContent-Length: 0\r\n\r\n"),
            ("status of four digits", "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n"),
            ("header without colon", "HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n"),
            ("a line protocol answer", "OK 3\n\r\n\r\n"),
        ]
        for (name, text) in cases {
            XCTAssertThrowsError(try statuses(text, chunk: 3), name)
        }
    }

    func test_read_endlessHead_throwsAtTheBound() {
        let text = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: aaaaaaaaaa\r\n", count: 1000)
        XCTAssertThrowsError(try statuses(text, chunk: 512))
    }

    /// Random cuts of a random series of answers always give the same statuses.
    func test_read_randomChunking_givesTheSameStatuses() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var stream = ""
            var expected: [Int] = []
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let body = String(repeating: "b", count: Int.random(in: 0...40, using: &generator))
                let status = [200, 412, 422, 503].randomElement(using: &generator)!
                stream += "HTTP/1.1 \(status) X\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                expected.append(status)
            }
            XCTAssertEqual(try statuses(stream, chunk: Int.random(in: 1...50, using: &generator)), expected)
        }
    }
}
