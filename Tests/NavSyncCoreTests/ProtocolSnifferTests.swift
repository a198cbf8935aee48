import XCTest
import NavSyncCore

final class ProtocolSnifferTests: XCTestCase {
    typealias Verdict = ProtocolSniffer.Verdict

    /// The verdict for the input fed whole, byte at a time, and in threes;
    /// all three must agree.
    private func verdict(_ input: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> Verdict {
        var whole = ProtocolSniffer()
        let first = whole.feed(input)
        var trickle = ProtocolSniffer()
        var second = Verdict.undecided
        for byte in input where second == .undecided { second = trickle.feed([byte]) }
        var threes = ProtocolSniffer()
        var third = Verdict.undecided
        var i = 0
        while i < input.count && third == .undecided {
            third = threes.feed(input[i..<min(i + 3, input.count)])
            i += 3
        }
        XCTAssertEqual(first, second, "byte at a time", file: file, line: line)
        XCTAssertEqual(first, third, "in threes", file: file, line: line)
        return first
    }

    private func verdict(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Verdict {
        verdict(Array(text.utf8), file: file, line: line)
    }

    func testSniffer_requestLinesAreHTTP() {
        XCTAssertEqual(verdict("GET / HTTP/1.1\r\n"), .http)
        XCTAssertEqual(verdict("GET / HTTP/1.0\n"), .http)
        XCTAssertEqual(verdict("POST / HTTP/1.1\r\nContent-Length: 14\r\n\r\nSELECT blue x\n"), .http)
        XCTAssertEqual(verdict("OPTIONS /ws?x=1 HTTP/1.1\r\n"), .http)
        XCTAssertEqual(verdict("BREW /\u{0} HTTP/1.1\n"), .http)
    }

    func testSniffer_commandsAreTheLineProtocol() {
        for text in ["GET\n", "GET\r\n", "SELECT blue x\n", "select red\n", "PUSH blue /path\n",
                     "OPEN /red/blue HTTP/1.1x\n", "GET / HTTP/1.2\n", "GET /a b HTTP/1.1\n",
                     "GET  / HTTP/1.1\n", " GET / HTTP/1.1\n", "Get / HTTP/1.1\n", "\n", "\u{FF}\n",
                     "OPEN /red\n", "GET / HTTP/1.1 \n", "GET /\r HTTP/1.1\n"] {
            XCTAssertEqual(verdict(text), .lineProtocol, text)
        }
    }

    func testSniffer_decidesEarlyForLineClients() {
        var sniffer = ProtocolSniffer()
        XCTAssertEqual(sniffer.feed(Array("PING".utf8)), .undecided)
        XCTAssertEqual(sniffer.feed(Array("\n".utf8)), .lineProtocol)
        var other = ProtocolSniffer()
        XCTAssertEqual(other.feed(Array("WATCH ".utf8)), .undecided)
        XCTAssertEqual(other.feed(Array("x".utf8)), .lineProtocol)
        var lower = ProtocolSniffer()
        XCTAssertEqual(lower.feed([UInt8(ascii: "g")]), .lineProtocol)
    }

    func testSniffer_keepsEveryByteForTheWinner() {
        var sniffer = ProtocolSniffer()
        _ = sniffer.feed(Array("SEL".utf8))
        _ = sniffer.feed(Array("ECT red\nGET\n".utf8))
        XCTAssertEqual(sniffer.takeBytes(), Array("SELECT red\nGET\n".utf8))
    }

    func testSniffer_longCandidateIsReadPastMaxLineUpTo8KiB() {
        let max = ProtocolSniffer.maxRequestLineBytes
        let fill = max - "GET / HTTP/1.1\n".utf8.count
        XCTAssertEqual(verdict("GET /" + String(repeating: "a", count: fill) + " HTTP/1.1\n"), .http)
        XCTAssertEqual(verdict("GET /" + String(repeating: "a", count: fill + 1) + " HTTP/1.1\n"), .requestLineTooLong)
        // A long candidate that turns out not to be HTTP goes to the line protocol (and its line-too-long).
        XCTAssertEqual(verdict("OPEN /" + String(repeating: "a", count: 5000) + "\n"), .lineProtocol)
        // A long line that does not start like a request line is judged at once.
        XCTAssertEqual(verdict("PING " + String(repeating: "a", count: 9000)), .lineProtocol)
    }
}
