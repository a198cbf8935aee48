import XCTest
@testable import RedisClient

/// The reply parser every Redis connection uses (hiredis's reader, through
/// `RedisReplyReader`): whole, a byte at a time, many replies per chunk,
/// and a table of malformed input.
final class RedisReplyReaderTests: XCTestCase {
    /// Well-formed replies of every RESP2 type, as Redis sends them.
    private let wellFormed: [(bytes: String, reply: RedisReply)] = [
        ("+OK\r\n", .status("OK")),
        ("-ERR unknown command 'NOPE'\r\n", .error("ERR unknown command 'NOPE'")),
        (":0\r\n", .integer(0)),
        (":-42\r\n", .integer(-42)),
        (":9223372036854775807\r\n", .integer(Int64.max)),
        ("$0\r\n\r\n", .string([])),
        ("$5\r\nhello\r\n", .string(Array("hello".utf8))),
        ("$4\r\na\r\nb\r\n", .string(Array("a\r\nb".utf8))),
        ("$3\r\n\u{0}\u{1}\u{2}\r\n", .string([0, 1, 2])),
        ("$-1\r\n", .null),
        ("*-1\r\n", .null),
        ("*0\r\n", .array([])),
        ("*3\r\n$7\r\napplied\r\n$1\r\n8\r\n$9\r\n/red/blue\r\n",
         .array([.string(Array("applied".utf8)), .string(Array("8".utf8)), .string(Array("/red/blue".utf8))])),
        ("*2\r\n*1\r\n:1\r\n*2\r\n$-1\r\n+x\r\n", .array([.array([.integer(1)]), .array([.null, .status("x")])])),
        ("*3\r\n$7\r\nmessage\r\n$15\r\nnavsync:changes\r\n$4\r\ne r \r\n",
         .array([.string(Array("message".utf8)), .string(Array("navsync:changes".utf8)), .string(Array("e r ".utf8))])),
    ]

    private func replies(_ chunks: [[UInt8]], file: StaticString = #filePath, line: UInt = #line) throws -> [RedisReply] {
        let reader = RedisReplyReader()
        var out: [RedisReply] = []
        for chunk in chunks {
            reader.feed(chunk)
            while let reply = try reader.next() { out.append(reply) }
        }
        return out
    }

    func test_reader_eachReply_whole() throws {
        for (bytes, reply) in wellFormed {
            XCTAssertEqual(try replies([Array(bytes.utf8)]), [reply], bytes.debugDescription)
        }
    }

    func test_reader_eachReply_byteAtATime_nothingBeforeItsLastByte() throws {
        for (bytes, reply) in wellFormed {
            let reader = RedisReplyReader()
            let all = Array(bytes.utf8)
            for (index, byte) in all.enumerated() {
                reader.feed([byte])
                let got = try reader.next()
                if index < all.count - 1 {
                    XCTAssertNil(got, "\(bytes.debugDescription): a reply after \(index + 1) of \(all.count) bytes")
                } else {
                    XCTAssertEqual(got, reply, bytes.debugDescription)
                }
            }
        }
    }

    func test_reader_manyRepliesPerChunk_anySplit_sameReplies() throws {
        let stream = wellFormed.flatMap { Array($0.bytes.utf8) }
        let expected = wellFormed.map(\.reply)
        XCTAssertEqual(try replies([stream]), expected, "all in one chunk")
        for size in [2, 3, 7, 64] {
            let chunks = stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min($0 + size, stream.count)]) }
            XCTAssertEqual(try replies(chunks), expected, "chunks of \(size)")
        }
    }

    func test_reader_malformedTable_isRefused_andStaysRefused() {
        let malformed: [(bytes: String, why: String)] = [
            ("?what\r\n", "Protocol error"),
            ("hello\r\n", "Protocol error"),
            ("%1\r\n+a\r\n+b\r\n", "Protocol error"),          // RESP3 map: not spoken by hiredis 0.14
            (":12a\r\n", "Bad integer value"),
            ("$abc\r\n", "Bad"),
            ("*x\r\n", "Bad"),
            ("$-2\r\n", "out of range"),
            ("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "depth"),
        ]
        for (bytes, why) in malformed {
            let reader = RedisReplyReader()
            reader.feed(Array(bytes.utf8))
            XCTAssertThrowsError(try { while try reader.next() != nil {} }(), bytes.debugDescription) { error in
                XCTAssertTrue("\(error)".contains(why), "\(bytes.debugDescription): \(error)")
            }
            reader.feed(Array("+OK\r\n".utf8))
            XCTAssertThrowsError(try reader.next(), "nothing is read past a malformed reply: \(bytes.debugDescription)")
        }
    }

    func test_reader_validRepliesBeforeAMalformedOne_areRead() throws {
        let reader = RedisReplyReader()
        reader.feed(Array("+OK\r\n:7\r\n!oops\r\n".utf8))
        XCTAssertEqual(try reader.next(), .status("OK"))
        XCTAssertEqual(try reader.next(), .integer(7))
        XCTAssertThrowsError(try reader.next())
    }
}
