import XCTest
import NavSyncCore

final class TerminalSafeTextTests: XCTestCase {
    func test_escaped_table() {
        let table: [(String, String)] = [
            ("ada control following", "ada control following"),
            ("", ""),
            ("caf\u{E9} \u{1F600}", "caf\u{E9} \u{1F600}"),
            ("\u{1B}]0;owned\u{07}", "\\x1B]0;owned\\x07"),
            ("\u{1B}[2J\u{1B}[H", "\\x1B[2J\\x1B[H"),
            ("tab\there", "tab\\x09here"),
            ("cr\rlf\n", "cr\\x0Dlf\\x0A"),
            ("del\u{7F}", "del\\x7F"),
            ("c1 \u{9B}31m", "c1 \\x9B31m"),
            ("back\\slash", "back\\slash"),
            ("\u{0}", "\\x00"),
        ]
        for (input, expected) in table {
            XCTAssertEqual(TerminalSafeText.escaped(input), expected, input.debugDescription)
        }
    }

    func test_escaped_keepingNewlines_escapesEverythingElse() {
        XCTAssertEqual(TerminalSafeText.escaped("a\u{1B}b\nc\r\n", keepingNewlines: true), "a\\x1Bb\nc\\x0D\n")
    }

    func test_escaped_everyScalarBelowSpace_isVisibleAndPrintable() {
        for value in UInt32(0)..<0xA0 {
            let scalar = Unicode.Scalar(value)!
            let out = TerminalSafeText.escaped(String(scalar))
            XCTAssertTrue(out.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) },
                          "U+\(String(value, radix: 16)) → \(out.debugDescription)")
        }
    }
}
