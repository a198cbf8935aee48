import XCTest
import NavSyncCore
import NavSyncWeb

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

    // MARK: - The bound while undecided

    /// True when `bytes` start with capitals, one space and `/`: the only
    /// case the sniffer may read past `maxMethodBytes + 1` before deciding.
    private func beginsLikeRequestLine(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")), space > bytes.startIndex,
              bytes[..<space].allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return false }
        return bytes.dropFirst(space - bytes.startIndex + 1).first == UInt8(ascii: "/")
    }

    /// Feeds `input` in chunks of `size`, checking after every feed that an
    /// undecided sniffer holds no more than its bound; returns the verdict.
    private func feedChecked(_ input: [UInt8], chunk size: Int,
                             file: StaticString = #filePath, line: UInt = #line) -> Verdict {
        var sniffer = ProtocolSniffer()
        var fed = 0
        while fed < input.count {
            let end = min(input.count, fed + size)
            let verdict = sniffer.feed(input[fed..<end])
            fed = end
            guard verdict == .undecided else { return verdict }
            let held = sniffer.bufferedByteCount
            XCTAssertEqual(held, fed, "keeps every byte while undecided", file: file, line: line)
            XCTAssertLessThan(held, ProtocolSniffer.maxRequestLineBytes, "chunk \(size)", file: file, line: line)
            if !beginsLikeRequestLine(input[..<fed]) {
                XCTAssertLessThanOrEqual(held, ProtocolSniffer.maxMethodBytes + 1,
                                         "undecided past the method bound, chunk \(size)", file: file, line: line)
            }
        }
        return .undecided
    }

    func testSniffer_methodBoundIsBelowTheSmallestMaxLine() {
        XCTAssertLessThan(ProtocolSniffer.maxMethodBytes + 1, Limits.smallestMaxLineBytes)
        XCTAssertGreaterThanOrEqual(ProtocolSniffer.maxMethodBytes, "UPDATEREDIRECTREF".utf8.count)
    }

    func testSniffer_onlyCapitalsAreDecidedWithinTheMethodBound() {
        let capitals = [UInt8](repeating: UInt8(ascii: "A"), count: 100_000)
        for size in [1, 3, 33, 4096, capitals.count] {
            XCTAssertEqual(feedChecked(capitals, chunk: size), .lineProtocol, "chunk \(size)")
        }
        var sniffer = ProtocolSniffer()
        XCTAssertEqual(sniffer.feed(capitals.prefix(ProtocolSniffer.maxMethodBytes)), .undecided)
        XCTAssertEqual(sniffer.feed([UInt8(ascii: "A")]), .lineProtocol, "one capital past the bound decides")
        XCTAssertEqual(sniffer.takeBytes().count, ProtocolSniffer.maxMethodBytes + 1, "and hands every byte over")
    }

    func testSniffer_methodsUpToTheBoundAreStillHTTP() {
        let longest = String(repeating: "M", count: ProtocolSniffer.maxMethodBytes)
        XCTAssertEqual(verdict("UPDATEREDIRECTREF / HTTP/1.1\r\n"), .http)
        XCTAssertEqual(verdict(longest + " / HTTP/1.1\r\n"), .http)
        XCTAssertEqual(verdict(longest + "M / HTTP/1.1\r\n"), .lineProtocol)
    }

    func testSniffer_undecidedNeverHoldsMoreThanItsBound() {
        let inputs: [String] = [
            String(repeating: "Z", count: 20_000),
            "GET " + String(repeating: "A", count: 20_000),
            "GET /" + String(repeating: "a", count: 20_000),
            "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1",
            "GET / HTTP/1.1\r\n",
            "PING " + String(repeating: "P", count: 10_000),
            String(repeating: "Q", count: ProtocolSniffer.maxMethodBytes) + " /" + String(repeating: "b", count: 9000),
        ]
        for text in inputs {
            let bytes = Array(text.utf8)
            let expected = verdict(bytes)
            for size in [1, 2, 7, 64, 1000, bytes.count] {
                let got = feedChecked(bytes, chunk: size)
                if expected != .undecided { XCTAssertEqual(got, expected, "\(text.prefix(40)) in chunks of \(size)") }
            }
        }
    }
}
