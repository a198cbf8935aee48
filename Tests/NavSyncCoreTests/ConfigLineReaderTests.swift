@testable import NavSyncCore
import XCTest

/// The line loop of `--tokens` and `--token-keys`: which lines reach the
/// file's reader, with which fields and numbers, and where it stops.
final class ConfigLineReaderTests: XCTestCase {
    private func lines(_ bytes: [UInt8]) -> Result<[ConfigLineReader.Line], ConfigFileProblem> {
        var seen: [ConfigLineReader.Line] = []
        return Result { () throws(ConfigFileProblem) in
            try ConfigLineReader.read(bytes) { seen.append($0) }
            return seen
        }
    }

    private func lines(_ text: String) -> Result<[ConfigLineReader.Line], ConfigFileProblem> { lines(Array(text.utf8)) }

    private func summary(_ result: Result<[ConfigLineReader.Line], ConfigFileProblem>) -> [String] {
        ((try? result.get()) ?? []).map { "\($0.number):" + $0.fields.joined(separator: "|") }
    }

    func test_read_wholeFile_skipsBlanksAndComments_countsEveryLine() {
        let file = "# a comment\n\nview hall token-0123456789abcdef\n   \t \n  # indented comment\ncontrol * tok#en#1234567890 ada\n"
        XCTAssertEqual(summary(lines(file)), ["3:view|hall|token-0123456789abcdef", "6:control|*|tok#en#1234567890|ada"])
    }

    func test_read_fieldsSplitAtRunsOfSpacesAndTabs() {
        XCTAssertEqual(summary(lines("\t a \t\t b  c\t")), ["1:a|b|c"])
    }

    func test_read_oddLineEndings() {
        let table: [(String, [String])] = [
            ("a b\r\nc d\r\n", ["1:a|b", "2:c|d"]),  // CRLF: the \r is dropped
            ("a b\nc d", ["1:a|b", "2:c|d"]),  // no final line break
            ("a b\r\n\r\n\r\nc", ["1:a|b", "4:c"]),  // blank CRLF lines still count
            ("a\rb c\n", ["1:a\rb|c"]),  // a lone \r inside a line is no line end
            ("a b\r\r\n", ["1:a|b\r"]),  // only one \r before the \n is dropped
            ("\n\n\n", []),
            ("", []),
            ("\r\n", []),
        ]
        for (file, expected) in table {
            XCTAssertEqual(summary(lines(file)), expected, file.debugDescription)
        }
    }

    func test_read_malformedTable_namesTheFirstBadLine() {
        let table: [([UInt8], Int)] = [
            ([0xFF], 1),
            (Array("a b\n".utf8) + [0xC3], 2),  // a truncated two-byte sequence
            (Array("# ok\n\n".utf8) + [0xED, 0xA0, 0x80] + Array(" x\n".utf8), 3),  // a UTF-8 surrogate
            (Array("# \u{FF}\n".utf8) + [0x23, 0xFE], 2),  // even in a comment
            ([0xC0, 0x80, 0x0A, 0xFF], 1),  // an overlong NUL, then another bad line: the first wins
        ]
        for (bytes, line) in table {
            guard case .failure(let problem) = lines(bytes) else { XCTFail("accepted: \(bytes)"); continue }
            XCTAssertEqual(problem, ConfigFileProblem(line: line, reason: "not valid UTF-8"), "\(bytes)")
        }
    }

    func test_read_stopsAtTheFirstProblemTheReaderThrows() {
        var seen: [Int] = []
        let result = Result { () throws(ConfigFileProblem) in
            try ConfigLineReader.read(Array("a\nb\n\u{FF}".utf8) + [0xFF]) { line throws(ConfigFileProblem) in
                seen.append(line.number)
                if line.fields == ["b"] { throw ConfigFileProblem(line: line.number, reason: "no b") }
            }
        }
        XCTAssertEqual(seen, [1, 2])
        guard case .failure(let problem) = result else { return XCTFail("accepted") }
        XCTAssertEqual(problem, ConfigFileProblem(line: 2, reason: "no b"))
    }

    func test_problem_describedWithAndWithoutALine() {
        XCTAssertEqual(ConfigFileProblem(line: 4, reason: "bad").described(file: "/etc/keys"), "/etc/keys:4: bad")
        XCTAssertEqual(ConfigFileProblem(line: 0, reason: "empty").described(file: "keys"), "keys: empty")
    }
}
