import NavSyncCore
import XCTest

/// The writing side of the parser's rules: what a client may put after a verb.
final class RequestArgumentsTests: XCTestCase {
    func test_argumentProblem_followsEachVerbsArgumentShape() {
        let table: [(verb: Verb, parts: [String?], problem: String?)] = [
            (.select, ["blue", "tabs\tand spaces"], nil),
            (.push, ["blue", nil], nil),
            (.present, ["", nil], "a screen name is needed"),
            (.select, ["two words", nil], "a screen name has no spaces or line breaks"),
            (.select, ["tab\tbed", nil], "a screen name has no spaces or line breaks"),
            (.select, ["line\nbreak", nil], "a screen name has no spaces or line breaks"),
            // A combining mark after the space must not hide it: the parser splits byte-wise.
            (.select, ["a \u{301}b", nil], "a screen name has no spaces or line breaks"),
            (.push, ["blue", "a\r\nb"], "data cannot contain a line break"),
            (.next, [nil], nil),
            (.next, ["a\rb"], "data cannot contain a line break"),
            (.ping, ["two words"], nil),
            (.ping, ["a\nPOP"], "data cannot contain a line break"),
            (.open, ["/red/blue:x"], nil),
            (.open, [""], "a route is needed, such as /red/blue"),
            (.open, ["/a b"], "a route has no spaces or line breaks (encode them as %20)"),
            (.join, ["room_1.x-y"], nil),
            (.join, ["no room"], "room names are 1-64 characters of A-Z a-z 0-9 _ . -"),
            (.join, [String(repeating: "r", count: 65)], "room names are 1-64 characters of A-Z a-z 0-9 _ . -"),
            (.auth, ["s3cret token"], nil),
            (.auth, [""], "a token is needed"),
            (.auth, ["a\nQUIT"], "a token cannot contain a line break"),
            (.hello, ["1"], nil),
            (.hello, ["1 2"], "HELLO takes at most one word"),
            (.watch, [nil], nil),
            (.watch, ["18446744073709551615"], nil),
            (.watch, ["18446744073709551616"], "a revision is a whole number below 2^64"),
            (.watch, ["+1"], "a revision is a whole number below 2^64"),
            (.get, [], nil),
        ]
        for row in table {
            XCTAssertEqual(row.verb.argumentProblem(row.parts), row.problem, "\(row.verb) \(row.parts)")
        }
    }

    func test_argumentsWithoutProblem_parseBackToTheSameVerb() {
        let parser = CommandParser(catalog: .builtIn, maxDepth: 64)
        let rows: [(Verb, [String?])] = [(.select, ["blue", "a b"]), (.next, ["x"]), (.open, ["/red/green"]),
                                          (.join, ["lobby"]), (.ping, ["hi there"]), (.watch, ["3"]), (.hello, ["1"])]
        for (verb, parts) in rows {
            XCTAssertNil(verb.argumentProblem(parts))
            guard case .success(let command)? = parser.parse(Array(verb.line(parts: parts).utf8)) else {
                return XCTFail("\(verb.line(parts: parts)) does not parse")
            }
            XCTAssertEqual(command.verb, verb)
        }
    }

    func test_guardProblem_allowsTheMutationsOnly() {
        for verb in Verb.allCases {
            XCTAssertEqual(Verb.guardProblem(verb) == nil, Verb.mutations.contains(verb), verb.rawValue)
        }
        XCTAssertEqual(Verb.guardProblem(.get), "IF guards a change, not GET")
    }

    func test_holdsLineBreak_seesCRAndLFOnly() {
        XCTAssertTrue(RequestArguments.holdsLineBreak("a\nb"))
        XCTAssertTrue(RequestArguments.holdsLineBreak("a\r\nb"))
        XCTAssertTrue(RequestArguments.holdsLineBreak("\r"))
        XCTAssertFalse(RequestArguments.holdsLineBreak("tab\there \u{2028}"))
    }
}
