import XCTest
import NavSyncCore

final class LineFramerTests: XCTestCase {
    typealias Frame = LineFramer.Frame

    private func line(_ text: String) -> Frame { .line(ArraySlice(text.utf8)) }

    /// Pulls every frame the framer can produce right now.
    private func drain(_ framer: inout LineFramer) -> [Frame] {
        var frames: [Frame] = []
        while let frame = framer.next() { frames.append(frame) }
        return frames
    }

    /// Feeds `chunks` in order, draining after each, then calls `finish()`.
    private func frames(of chunks: [[UInt8]], maxLineBytes: Int) -> [Frame] {
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        var frames: [Frame] = []
        for chunk in chunks {
            framer.append(chunk)
            frames += drain(&framer)
        }
        if let last = framer.finish() { frames.append(last) }
        return frames
    }

    private func whole(_ input: [UInt8]) -> [[UInt8]] { [input] }

    private func byteAtATime(_ input: [UInt8]) -> [[UInt8]] { input.map { [$0] } }

    /// Chunks that each hold `linesPerChunk` complete lines (the last may be partial).
    private func lineAligned(_ input: [UInt8], linesPerChunk: Int) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        var lines = 0
        for byte in input {
            current.append(byte)
            if byte == UInt8(ascii: "\n") {
                lines += 1
                if lines == linesPerChunk {
                    chunks.append(current)
                    current = []
                    lines = 0
                }
            }
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }

    private func randomChunks(_ input: [UInt8], using rng: inout SplitMix64) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var i = 0
        while i < input.count {
            let size = Int.random(in: 1...24, using: &rng)
            let end = Swift.min(i + size, input.count)
            chunks.append(Array(input[i..<end]))
            i = end
        }
        return chunks
    }

    // MARK: - The same frames however the bytes arrive

    /// max 16. Covers LF, CRLF, empty lines, a lone `\r`, an exactly-max line
    /// ending in CRLF, two overlong lines (one ending `\r\r\n`), UTF-8, and an
    /// unterminated last line.
    private let corpus = Array((
        "GET\n" +
        "SELECT red\r\n" +
        "\n" +
        "\r\n" +
        "a\rb\n" +
        "0123456789abcdef\r\n" +
        "0123456789abcdefX\n" +
        "PING caf\u{E9} \u{1F389}\n" +
        "0123456789abcdef\r\r\n" +
        "PUSH blue  two  spaces\n" +
        "tail\r" +
        "WATCH\n" +
        "last"
    ).utf8)

    private var expectedCorpusFrames: [Frame] {
        [
            line("GET"),
            line("SELECT red"),
            line(""),
            line(""),
            line("a\rb"),
            line("0123456789abcdef"),
            .tooLong,
            line("PING caf\u{E9} \u{1F389}"),
            .tooLong,
            .tooLong, // "PUSH blue  two  spaces" is 22 bytes
            line("tail\rWATCH"),
            line("last"),
        ]
    }

    func test_framer_wholeInput_yieldsExpectedFrames() {
        XCTAssertEqual(frames(of: whole(corpus), maxLineBytes: 16), expectedCorpusFrames)
    }

    func test_framer_oneByteAtATime_yieldsSameFrames() {
        XCTAssertEqual(frames(of: byteAtATime(corpus), maxLineBytes: 16), expectedCorpusFrames)
    }

    func test_framer_manyLinesPerChunk_yieldsSameFrames() {
        for n in 1...5 {
            XCTAssertEqual(frames(of: lineAligned(corpus, linesPerChunk: n), maxLineBytes: 16),
                           expectedCorpusFrames, "\(n) lines per chunk")
        }
    }

    func test_framer_randomChunkings_yieldSameFrames() {
        var rng = SplitMix64(seed: 0x6E61_7673)
        for round in 0..<500 {
            let chunks = randomChunks(corpus, using: &rng)
            XCTAssertEqual(frames(of: chunks, maxLineBytes: 16), expectedCorpusFrames, "round \(round)")
        }
    }

    func test_framer_everySplitPoint_yieldsSameFrames() {
        for cut in 1..<corpus.count {
            let chunks = [Array(corpus[..<cut]), Array(corpus[cut...])]
            XCTAssertEqual(frames(of: chunks, maxLineBytes: 16), expectedCorpusFrames, "cut at \(cut)")
        }
    }

    // MARK: - Terminators

    func test_framer_crlfAndLf_yieldSameLines() {
        let lf = frames(of: [Array("GET\nPOP\nROOT\n".utf8)], maxLineBytes: 64)
        let crlf = frames(of: [Array("GET\r\nPOP\r\nROOT\r\n".utf8)], maxLineBytes: 64)
        XCTAssertEqual(lf, [line("GET"), line("POP"), line("ROOT")])
        XCTAssertEqual(crlf, lf)
    }

    func test_framer_carriageReturn_strippedOnlyBeforeLineFeed() {
        let input = Array("a\rb\n\rc\nd\r\r\n\r\r\n".utf8)
        XCTAssertEqual(frames(of: [input], maxLineBytes: 64),
                       [line("a\rb"), line("\rc"), line("d\r"), line("\r")])
    }

    func test_framer_emptyLines_areFramedAsEmpty() {
        XCTAssertEqual(frames(of: [Array("\n\r\n\n".utf8)], maxLineBytes: 8),
                       [line(""), line(""), line("")])
    }

    // MARK: - The length limit

    func test_framer_lineOfExactlyMax_isAccepted() {
        let max = 8
        let text = String(repeating: "x", count: max)
        XCTAssertEqual(frames(of: [Array("\(text)\n".utf8)], maxLineBytes: max), [line(text)])
        XCTAssertEqual(frames(of: [Array("\(text)\r\n".utf8)], maxLineBytes: max), [line(text)])
        XCTAssertEqual(frames(of: byteAtATime(Array("\(text)\r\n".utf8)), maxLineBytes: max), [line(text)])
    }

    func test_framer_exactlyMaxWithCrlfSplitAfterCr_isAccepted() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("12345678\r".utf8))
        XCTAssertNil(framer.next(), "a max-length line waiting for its \\n after \\r is not too long yet")
        XCTAssertEqual(framer.bufferedByteCount, 9)
        framer.append(Array("\n".utf8))
        XCTAssertEqual(framer.next(), line("12345678"))
        XCTAssertNil(framer.next())
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func test_framer_exactlyMaxThenCrNotFollowedByLf_isTooLong() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("12345678\r".utf8))
        XCTAssertNil(framer.next())
        framer.append(Array("x".utf8))
        XCTAssertEqual(framer.next(), .tooLong)
        XCTAssertNil(framer.next())
        framer.append(Array("yz\nGET\n".utf8))
        XCTAssertEqual(drain(&framer), [line("GET")])
    }

    func test_framer_maxPlusOne_isTooLongBeforeAnyNewline() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("12345678".utf8))
        XCTAssertNil(framer.next(), "exactly max bytes is still fine")
        framer.append(Array("9".utf8))
        XCTAssertEqual(framer.next(), .tooLong, "reported as soon as the limit is passed")
        XCTAssertNil(framer.next())
    }

    func test_framer_tooLong_isReportedExactlyOnce() {
        var framer = LineFramer(maxLineBytes: 8)
        var frames: [Frame] = []
        for _ in 0..<100 {
            framer.append(Array("more bytes ".utf8))
            frames += drain(&framer)
        }
        framer.append(Array("end of it\n".utf8))
        frames += drain(&framer)
        XCTAssertEqual(frames, [.tooLong])
    }

    func test_framer_afterTooLong_restOfLineDiscardedAndNextLineWorks() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("0123456789 SELECT red".utf8))
        XCTAssertEqual(drain(&framer), [.tooLong])
        framer.append(Array(" still the same line\r\nGET\nPOP".utf8))
        XCTAssertEqual(drain(&framer), [line("GET")], "nothing of the overlong line leaks out")
        framer.append(Array("\n".utf8))
        XCTAssertEqual(drain(&framer), [line("POP")])
    }

    func test_framer_tooLongLineWithItsNewlineInOneChunk_isOneTooLong() {
        XCTAssertEqual(frames(of: [Array("0123456789\nGET\n".utf8)], maxLineBytes: 8),
                       [.tooLong, line("GET")])
    }

    func test_framer_oneMebibyteLine_neverBuffersMoreThanMaxPlusOne() {
        let max = Limits().maxLineBytes
        var framer = LineFramer(maxLineBytes: max)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var frames: [Frame] = []
        for i in 0..<(1 << 20) / chunk.count {
            framer.append(chunk)
            frames += drain(&framer)
            XCTAssertLessThanOrEqual(framer.bufferedByteCount, max + 1, "after chunk \(i)")
            if framer.bufferedByteCount > max + 1 { break }
        }
        XCTAssertEqual(frames, [.tooLong])
        framer.append(Array("\nPING\n".utf8))
        XCTAssertEqual(drain(&framer), [line("PING")])
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func test_framer_oneMebibyteLineWithOddLimit_neverBuffersMoreThanMaxPlusOne() {
        let max = 1000
        var framer = LineFramer(maxLineBytes: max)
        let chunk = [UInt8](repeating: UInt8(ascii: "y"), count: 4096)
        var tooLongCount = 0
        for i in 0..<256 {
            framer.append(chunk)
            tooLongCount += drain(&framer).count(where: { $0 == .tooLong })
            XCTAssertLessThanOrEqual(framer.bufferedByteCount, max + 1, "after chunk \(i)")
        }
        XCTAssertEqual(tooLongCount, 1)
    }

    func test_framer_bufferedByteCount_countsOnlyThePendingLine() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("GET\nPI".utf8))
        XCTAssertEqual(framer.next(), line("GET"))
        XCTAssertNil(framer.next())
        XCTAssertEqual(framer.bufferedByteCount, 2)
        framer.append(Array("NG\n".utf8))
        XCTAssertEqual(framer.next(), line("PING"))
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    // MARK: - End of input

    func test_framer_finish_returnsUnterminatedLastLine() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("GET\nPING hi".utf8))
        XCTAssertEqual(drain(&framer), [line("GET")])
        XCTAssertEqual(framer.finish(), line("PING hi"))
        XCTAssertNil(framer.finish(), "finish empties the framer")
    }

    func test_framer_finish_afterCompleteLine_returnsNil() {
        var framer = LineFramer(maxLineBytes: 64)
        framer.append(Array("GET\n".utf8))
        XCTAssertEqual(drain(&framer), [line("GET")])
        XCTAssertNil(framer.finish())
    }

    func test_framer_finish_withNoInput_returnsNil() {
        var framer = LineFramer(maxLineBytes: 64)
        XCTAssertNil(framer.finish())
    }

    func test_framer_finish_whileDiscardingOverlongLine_returnsNil() {
        var framer = LineFramer(maxLineBytes: 4)
        framer.append(Array("too long already".utf8))
        XCTAssertEqual(drain(&framer), [.tooLong])
        XCTAssertNil(framer.finish(), "the overlong line was already reported")
    }

    func test_framer_finish_withExactlyMaxUnterminatedLine_returnsIt() {
        var framer = LineFramer(maxLineBytes: 4)
        framer.append(Array("QUIT".utf8))
        XCTAssertNil(framer.next())
        XCTAssertEqual(framer.finish(), line("QUIT"))
    }
}
