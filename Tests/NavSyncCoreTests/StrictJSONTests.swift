import Foundation
import XCTest
import NavSyncCore

final class StrictJSONTests: XCTestCase {
    private func problem(_ bytes: [UInt8]) -> StrictJSON.SyntaxError? {
        do {
            try StrictJSON.validate(bytes)
            return nil
        } catch {
            return error
        }
    }

    private func problem(_ text: String) -> StrictJSON.SyntaxError? { problem(Array(text.utf8)) }

    private let valid: [String] = [
        "{}", "[]", " \t\r\n{ } ", "0", "-0", "12.5e-3", "1E+9", "-0.0", "true", "false", "null", #""""#,
        #"{"a": [1, 2, {"b": null}], "c": "x\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}"#,
        #"["caf\u00e9", "café", "\uDBFF\uDFFF"]"#, #"{"a": 1, "A": 2, "a ": 3}"#, "[[[[]]]]",
    ]

    func test_strictJSON_validTexts_areAcceptedAndFoundationAgrees() throws {
        for text in valid {
            XCTAssertNil(problem(text), text)
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]), text)
        }
        XCTAssertNil(problem([0xEF, 0xBB, 0xBF] + Array("{}".utf8)), "a leading byte order mark is skipped")
    }

    func test_strictJSON_malformedTable_namesWhereAndWhat() {
        let rows: [(text: String, line: Int, column: Int, says: String)] = [
            ("", 1, 1, "ends where a value should be"),
            ("   ", 1, 4, "ends where a value should be"),
            (#"{"a": 1,}"#, 1, 9, "a comma before }"),
            ("[1, 2,]", 1, 7, "a comma before ]"),
            ("[1,\n 2,\n]", 3, 1, "a comma before ]"),
            ("[,]", 1, 2, "expected a value"),
            ("[1 2]", 1, 4, "expected , or ]"),
            (#"{"a" 1}"#, 1, 6, "expected : after a member name"),
            (#"{"a": 1 "b": 2}"#, 1, 9, "expected , or }"),
            ("{a: 1}", 1, 2, "member name in double quotes"),
            ("{'a': 1}", 1, 2, "member name in double quotes"),
            (#"{"a": 1, "a": 2}"#, 1, 10, #"the member name "a" appears twice"#),
            (#"{"a": 1, "\u0061": 2}"#, 1, 10, "appears twice"),
            (#"["abc"#, 1, 6, "a string is not closed"),
            ("[\"a\u{1}b\"]", 1, 4, "a control character in a string"),
            ("[\"a\nb\"]", 1, 4, "a control character in a string"),
            (#"["\x"]"#, 1, 3, "an unknown escape"),
            (#"["\u12G4"]"#, 1, 7, "four hex digits"),
            (#"["\uD800"]"#, 1, 3, "half of a surrogate pair"),
            (#"["\uD800\u0041"]"#, 1, 3, "half of a surrogate pair"),
            (#"["\uDC00"]"#, 1, 3, "half of a surrogate pair"),
            ("[01]", 1, 3, "cannot start with 0"),
            ("[1.]", 1, 4, "a digit must follow the decimal point"),
            ("[.5]", 1, 2, "expected a value"),
            ("[1e]", 1, 4, "a digit must follow the exponent"),
            ("[+1]", 1, 2, "expected a value"),
            ("[-]", 1, 3, "a number needs a digit"),
            ("[0x10]", 1, 3, "expected , or ]"),
            ("[NaN]", 1, 2, "expected a value"),
            ("[Infinity]", 1, 2, "expected a value"),
            ("[tru]", 1, 2, "did you mean true"),
            ("[True]", 1, 2, "expected a value"),
            ("{} {}", 1, 4, "more text after the JSON value"),
            ("{}\n// note", 2, 1, "more text after the JSON value"),
            ("/* c */ {}", 1, 1, "expected a value"),
        ]
        for row in rows {
            guard let error = problem(row.text) else { XCTFail("accepted: \(row.text)"); continue }
            XCTAssertEqual(error.line, row.line, "\(row.text): \(error)")
            XCTAssertEqual(error.column, row.column, "\(row.text): \(error)")
            XCTAssertTrue(error.problem.contains(row.says), "\(row.text): \(error)")
            XCTAssertEqual(error.description, "line \(error.line) column \(error.column): \(error.problem)")
        }
    }

    func test_strictJSON_everyCutOfAValidDocument_isRefused() {
        let document = Array(#"{"a": [1, -2.5e3, true, false, null, "x\u00e9"], "b": {}}"#.utf8)
        XCTAssertNil(problem(document))
        for length in 0..<document.count {
            XCTAssertNotNil(problem(Array(document.prefix(length))), "cut at \(length)")
        }
    }

    func test_strictJSON_everyByteInsideAString_isJudgedAlone() {
        for byte in UInt8.min...UInt8.max {
            let text: [UInt8] = Array(#"[""#.utf8) + [byte] + Array(#""]"#.utf8)
            let refused = problem(text) != nil
            // Control bytes, a lone quote or backslash, and bytes that are not UTF-8 on their own.
            let expected = byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte >= 0x80
            XCTAssertEqual(refused, expected, "byte \(byte)")
        }
        XCTAssertEqual(problem([UInt8(ascii: "\""), 0xC3, UInt8(ascii: "\"")])?.problem, "the text is not UTF-8")
    }

    func test_strictJSON_nestingIsBounded() {
        let deepest = String(repeating: "[", count: StrictJSON.maxDepth) + String(repeating: "]", count: StrictJSON.maxDepth)
        XCTAssertNil(problem(deepest))
        let deeper = "[" + deepest + "]"
        XCTAssertTrue(problem(deeper)?.problem.contains("nested deeper than") ?? false)
        let hostile = String(repeating: #"{"a":"#, count: 100_000)
        XCTAssertTrue(problem(hostile)?.problem.contains("nested deeper than") ?? false)
    }
}
