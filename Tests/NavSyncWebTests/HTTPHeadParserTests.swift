import XCTest
import NavSyncCore
import NavSyncWeb

final class HTTPHeadParserTests: XCTestCase {
    typealias Outcome = Result<HTTPRequestHead, HTTPHeadError>

    /// Feeds the chunks in order and collects every outcome, stopping at the first failure.
    private func outcomes(_ chunks: [[UInt8]]) -> [Outcome] {
        var parser = HTTPHeadParser()
        var results: [Outcome] = []
        for chunk in chunks {
            parser.append(chunk)
            while let outcome = parser.next() {
                results.append(outcome)
                if case .failure = outcome { return results }
            }
        }
        return results
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Three requests: CRLF, bare LF, and one with many headers and blanks around values.
    private let pipeline =
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nUser-Agent: curl/8\r\n\r\n" +
        "HEAD /healthz HTTP/1.0\nHost: localhost\n\n" +
        "GET /rooms/main?x=1 HTTP/1.1\r\nHost: [::1]:7878\r\nConnection:  close \r\nX-Empty:\r\n" +
        "Content-Length: 0\r\nAuthorization: Bearer abc\t\r\n\r\n"

    private func expectedPipeline() -> [Outcome] {
        [
            .success(HTTPRequestHead(method: "GET", target: "/", minorVersion: 1,
                                     headers: [("host", "127.0.0.1:7878"), ("user-agent", "curl/8")])),
            .success(HTTPRequestHead(method: "HEAD", target: "/healthz", minorVersion: 0, headers: [("host", "localhost")])),
            .success(HTTPRequestHead(method: "GET", target: "/rooms/main?x=1", minorVersion: 1,
                                     headers: [("host", "[::1]:7878"), ("connection", "close"), ("x-empty", ""),
                                               ("content-length", "0"), ("authorization", "Bearer abc")])),
        ]
    }

    func testParser_pipelineWhole() {
        XCTAssertEqual(outcomes([bytes(pipeline)]), expectedPipeline())
    }

    func testParser_pipelineByteAtATime() {
        XCTAssertEqual(outcomes(bytes(pipeline).map { [$0] }), expectedPipeline())
    }

    func testParser_pipelineRandomChunks() {
        var rng = SplitMix64(seed: 10)
        let input = bytes(pipeline)
        for _ in 0..<50 {
            var chunks: [[UInt8]] = []
            var i = 0
            while i < input.count {
                let end = min(input.count, i + Int.random(in: 1...40, using: &rng))
                chunks.append(Array(input[i..<end]))
                i = end
            }
            XCTAssertEqual(outcomes(chunks), expectedPipeline())
        }
    }

    func test_parser_holdsPartialHead_fromItsFirstByteUntilItsBlankLine() {
        var parser = HTTPHeadParser()
        XCTAssertFalse(parser.holdsPartialHead)
        var seen: [Bool] = []
        for byte in Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8) {
            parser.append([byte])
            _ = parser.next()
            seen.append(parser.holdsPartialHead)
        }
        XCTAssertEqual(seen.dropLast(), Array(repeating: true, count: seen.count - 1),
                       "a request line and headers without the blank line are a started head")
        XCTAssertEqual(seen.last, false, "a whole head is no longer partial")
    }

    func testParser_manyRequestsInOneChunk() {
        let one = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        let results = outcomes([bytes(String(repeating: one, count: 200))])
        XCTAssertEqual(results.count, 200)
        XCTAssertTrue(results.allSatisfy { (try? $0.get().target) == "/healthz" })
    }

    func testParser_contentLengthAndKeepAlive() throws {
        let head = try XCTUnwrap(outcomes([bytes("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n")]).first).get()
        XCTAssertEqual(head.contentLength, 12)
        XCTAssertTrue(head.wantsKeepAlive)
        let old = try XCTUnwrap(outcomes([bytes("GET / HTTP/1.0\r\n\r\n")]).first).get()
        XCTAssertFalse(old.wantsKeepAlive)
        let oldKept = try XCTUnwrap(outcomes([bytes("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")]).first).get()
        XCTAssertTrue(oldKept.wantsKeepAlive)
        let closing = try XCTUnwrap(outcomes([bytes("GET / HTTP/1.1\r\nHost: a\r\nConnection: TE, close\r\n\r\n")]).first).get()
        XCTAssertFalse(closing.wantsKeepAlive)
    }

    func testParser_bodyIsSkippedNotParsed() {
        var parser = HTTPHeadParser()
        parser.append(bytes("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 14\r\n\r\nSELECT blue x\nGET /ws HTTP/1.1\r\nHost: a\r\n\r\n"))
        guard case .success(let first)? = parser.next() else { return XCTFail("no first head") }
        XCTAssertEqual(parser.skip(upTo: first.contentLength), 14)
        guard case .success(let second)? = parser.next() else { return XCTFail("no second head") }
        XCTAssertEqual(second.target, "/ws")
    }

    func test_parser_bodyIsTaken_inPieces_asItArrives() {
        var parser = HTTPHeadParser()
        parser.append(bytes("POST /rooms/a HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n{\"op\""))
        guard case .success(let head)? = parser.next() else { return XCTFail("no head") }
        var body = Array(parser.take(upTo: head.contentLength))
        XCTAssertEqual(body.count, 5)
        parser.append(bytes(":\"pop\"}GET"))
        body += parser.take(upTo: head.contentLength - body.count)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "{\"op\":\"pop\"}")
        XCTAssertEqual(parser.bufferedByteCount, 3, "what follows the body stays for the next head")
    }

    func test_parser_postWithBothLengths_isLeftToTheAPI_everyOtherMethodIs400() {
        var parser = HTTPHeadParser()
        parser.append(bytes("POST /rooms/a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"))
        guard case .success(let head)? = parser.next() else { return XCTFail("no head") }
        XCTAssertTrue(head.hasTransferEncoding)
    }

    func testParser_bytesAfterHeadAreHandedOver() {
        var parser = HTTPHeadParser()
        parser.append(bytes("GET /ws HTTP/1.1\r\nHost: a\r\n\r\n\u{81}\u{7F}"))
        XCTAssertNotNil(try? parser.next()?.get())
        XCTAssertEqual(parser.takeBuffered(), [0xC2, 0x81, 0x7F])
    }

    func testParser_limitsAtTheEdge() {
        // A request line of exactly the limit (its LF included) passes; one more byte is 414.
        let fill = HTTPHeadParser.maxRequestLineBytes - "GET / HTTP/1.1\n".utf8.count
        let longest = "GET /" + String(repeating: "a", count: fill) + " HTTP/1.1\nHost: a\n\n"
        XCTAssertNotNil(try? outcomes([bytes(longest)]).first?.get())
        let over = "GET /" + String(repeating: "a", count: fill + 1) + " HTTP/1.1\nHost: a\n\n"
        XCTAssertEqual(outcomes([bytes(over)]).first.flatMap(status), 414)
        // Header lines of exactly the limit pass (the blank line counts too).
        let headerFill = HTTPHeadParser.maxHeaderBytes - "Host: a\nX: \n\n".utf8.count
        let biggest = "GET / HTTP/1.1\nHost: a\nX: " + String(repeating: "b", count: headerFill) + "\n\n"
        XCTAssertNotNil(try? outcomes([bytes(biggest)]).first?.get())
        let tooBig = "GET / HTTP/1.1\nHost: a\nX: " + String(repeating: "b", count: headerFill + 1) + "\n\n"
        XCTAssertEqual(outcomes([bytes(tooBig)]).first.flatMap(status), 431)
    }

    func testParser_endlessHeaderWithoutNewlineIs431WithoutWaiting() {
        var parser = HTTPHeadParser()
        parser.append(bytes("GET / HTTP/1.1\r\nX: "))
        XCTAssertNil(parser.next())
        parser.append([UInt8](repeating: UInt8(ascii: "a"), count: HTTPHeadParser.maxHeaderBytes))
        XCTAssertEqual(parser.next().flatMap(status), 431)
    }

    private func status(_ outcome: Outcome) -> Int? {
        if case .failure(let error) = outcome { return error.status }
        return nil
    }

    // MARK: - Malformed heads

    /// Each input must fail with this status, whole and a byte at a time.
    private let malformed: [(String, Int, String)] = [
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 400, "NUL in a value"),
        ("GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n", 400, "NUL in the target"),
        ("GET / HTTP/1.1\rHost: a\r\n\r\n", 400, "bare CR ends a line"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400, "bare CR in a value"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n  folded\r\n\r\n", 400, "obs-fold with spaces"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tfolded\r\n\r\n", 400, "obs-fold with a tab"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400, "duplicate Content-Length"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400, "conflicting Content-Length"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400, "Content-Length list"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "negative Content-Length"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "huge Content-Length"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400, "empty Content-Length"),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both lengths"),
        ("GET / HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 without Host"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Hosts"),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, "blank before the colon"),
        ("GET / HTTP/1.1\r\n: a\r\n\r\n", 400, "empty header name"),
        ("GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400, "header without a colon"),
        ("GET / HTTP/1.1\r\nX\u{7F}: a\r\n\r\n", 400, "DEL in a header name"),
        ("GET / HTTP/1.1\r\nHost: a\u{1B}[31m\r\n\r\n", 400, "escape in a value"),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "two spaces after the method"),
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400, "trailing space"),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 400, "HTTP/2.0"),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", 400, "lowercase version"),
        ("get / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "lowercase method"),
        ("GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, "absolute-form target"),
        ("GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", 400, "non-ASCII target"),
        ("GET /\r\n\r\n", 400, "HTTP/0.9 line"),
        ("GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400, "four parts"),
        ("GET /" + String(repeating: "x", count: 9000) + " HTTP/1.1\r\n\r\n", 414, "request line over 8 KiB"),
        ("GET / HTTP/1.1\r\n" + String(repeating: "X-Flood: 1\r\n", count: 101) + "\r\n", 431, "header count flood"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "y", count: 9000) + "\r\n\r\n", 431, "one huge header"),
    ]

    func testParser_malformedTable() {
        for (input, expected, why) in malformed {
            let whole = outcomes([bytes(input)])
            XCTAssertEqual(whole.last.flatMap(status), expected, why)
            let trickled = outcomes(bytes(input).map { [$0] })
            XCTAssertEqual(trickled.last.flatMap(status), expected, "\(why), a byte at a time")
        }
    }

    func testParser_failureIsFinal() {
        var parser = HTTPHeadParser()
        parser.append(bytes("GET / HTTP/9\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"))
        XCTAssertEqual(parser.next().flatMap(status), 400)
        XCTAssertEqual(parser.next().flatMap(status), 400)
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }
}
