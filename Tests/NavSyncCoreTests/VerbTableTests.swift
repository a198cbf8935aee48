import Foundation
import NavSyncCore
import XCTest

/// The protocol table drives the parser, HELP and IF; these check that what
/// is still written by hand (the fuzz dictionary) keeps up with it.
final class VerbTableTests: XCTestCase {
    func test_verb_token_isASCIICaseInsensitiveOnly() {
        XCTAssertEqual(Verb(token: "select"), .select)
        XCTAssertEqual(Verb(token: "If"), .guarded)
        XCTAssertNil(Verb(token: "\u{17F}elect"))
        XCTAssertNil(Verb(token: "SELECTS"))
        XCTAssertNil(Verb(token: ""))
    }

    func test_mutations_areExactlyTheVerbsIFGuards() {
        XCTAssertEqual(Verb.mutations, [.select, .push, .pop, .root, .next, .open, .present, .dismiss])
        let parser = CommandParser(catalog: .builtIn, maxDepth: 64)
        for verb in Verb.allCases where !verb.row.isMutation {
            guard case .failure(let error)? = parser.parse(Array("IF 0 \(verb.rawValue)".utf8)) else {
                return XCTFail("IF 0 \(verb.rawValue) was accepted")
            }
            XCTAssertEqual(error.code, .badArgs, verb.rawValue)
        }
    }

    func test_help_hasOneLinePerVerbInTableOrder() {
        let lines = Verb.helpLines.dropFirst()
        XCTAssertEqual(lines.count, Verb.allCases.count)
        for (line, verb) in zip(lines, Verb.allCases) {
            XCTAssertTrue(line.hasPrefix(verb.rawValue), line)
        }
    }

    func test_fuzzDictionary_namesEveryVerb() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let dictionary = try String(contentsOf: root.appendingPathComponent("Fuzz/dict/parser.dict"), encoding: .utf8)
        for verb in Verb.allCases {
            XCTAssertTrue(dictionary.contains("\"\(verb.rawValue)"), "Fuzz/dict/parser.dict lacks \(verb.rawValue)")
        }
    }

    func test_line_joinsNonEmptyPartsWithOneSpace() {
        XCTAssertEqual(Verb.push.line("blue", nil), "PUSH blue")
        XCTAssertEqual(Verb.next.line(""), "NEXT")
        XCTAssertEqual(Verb.select.line("blue", "a  b"), "SELECT blue a  b")
    }
}
