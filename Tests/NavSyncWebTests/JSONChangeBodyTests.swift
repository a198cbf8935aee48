import NavSyncCore
import NavSyncWeb
import XCTest

/// `POST /rooms/NAME`'s body: every op of the line protocol becomes the line
/// that makes the same change, and every body that is not a change is
/// refused with the status HTTP-API.md gives it.
final class JSONChangeBodyTests: XCTestCase {
    private let parser = CommandParser(catalog: .builtIn, maxDepth: 16)

    private func change(_ json: String, maxLine: Int = 4096) -> Result<JSONChangeBody, JSONChangeBody.Refusal> {
        JSONChangeBody.parse(Array(json.utf8), maxLineBytes: maxLine)
    }

    /// What the hub makes of the line the body became.
    private func command(_ json: String, ifRevision: UInt64? = nil) throws -> Command {
        let body = try change(json).get()
        return try XCTUnwrap(parser.parse(Array(body.requestLine(ifRevision: ifRevision).utf8))).get()
    }

    func test_parse_everyOpOfTheLineProtocol_givesTheLinesCommand() throws {
        let bodies: [Verb: (json: String, line: String)] = [
            .select: (#"{"op":"select","screen":"green"}"#, "SELECT green"),
            .push: (#"{"op":"push","screen":"blue","data":"on the big screen"}"#, "PUSH blue on the big screen"),
            .pop: (#"{"op":"pop"}"#, "POP"),
            .root: (#"{"op":"root"}"#, "ROOT"),
            .next: (#"{"op":"next","data":"hi"}"#, "NEXT hi"),
            .open: (#"{"op":"open","route":"/red/blue:a%20b"}"#, "OPEN /red/blue:a%20b"),
            .present: (#"{"op":"present","screen":"blue"}"#, "PRESENT blue"),
            .dismiss: (#"{"op":"dismiss"}"#, "DISMISS"),
        ]
        XCTAssertEqual(Set(bodies.keys), Set(Verb.mutations), "one body per op of the verb table")
        for (verb, body) in bodies {
            let parsed = try change(body.json).get()
            XCTAssertEqual(parsed.verb, verb)
            XCTAssertEqual(parsed.line, body.line)
            let overTheLine = try XCTUnwrap(parser.parse(Array(body.line.utf8))).get()
            XCTAssertEqual(try command(body.json), overTheLine, body.line)
        }
    }

    func test_parse_dataBecomesTheRoutesEncodedData() throws {
        guard case .mutate(.push(let entry), nil) = try command(#"{"op":"push","screen":"blue","data":"on the big screen"}"#) else {
            return XCTFail("not a push")
        }
        XCTAssertEqual(Route.encode([RouteEntry(screen: "red"), entry]), "/red/blue:on%20the%20big%20screen")
    }

    func test_requestLine_ifMatchBecomesIF() throws {
        XCTAssertEqual(try change(#"{"op":"pop"}"#).get().requestLine(ifRevision: 7), "IF 7 POP")
        XCTAssertEqual(try command(#"{"op":"select","screen":"red"}"#, ifRevision: 3),
                       .mutate(.select(RouteEntry(screen: "red")), ifRevision: 3))
    }

    func test_parse_escapedStringsAreReadAsText() throws {
        XCTAssertEqual(try change(#"{"op":"push","screen":"bl\u0075e","data":"caf\u00e9 \"x\""}"#).get().line,
                       "PUSH blue café \"x\"")
    }

    func test_parse_byteOrderMarkAndBlanksAroundTheObject_areTaken() throws {
        XCTAssertEqual(try JSONChangeBody.parse([0xEF, 0xBB, 0xBF] + Array(#"{"op":"pop"}"#.utf8), maxLineBytes: 4096).get().line, "POP")
        XCTAssertEqual(try change(" \r\n\t{ \"op\" : \"select\" , \"screen\" : \"red\" }\n").get().line, "SELECT red")
        // A member that is not a string is refused whatever it holds, a huge number included.
        guard case .failure(let refusal) = change(#"{"op":"push","screen":"blue","data":1e400}"#) else { return XCTFail("taken") }
        XCTAssertTrue(refusal.error.message.contains("\"data\" must be a string"), refusal.error.message)
    }

    func test_parse_malformedBodies_are400WithBadArgs() {
        let table: [(String, String)] = [
            ("", "the body is not JSON"),
            ("   ", "the body is not JSON"),
            ("{", "the body is not JSON"),
            ("[]", "one JSON object"),
            (#""push""#, "one JSON object"),
            ("42", "one JSON object"),
            ("null", "one JSON object"),
            (#"{"op":"pop",}"#, "trailing commas"),
            (#"{"op":"pop","op":"root"}"#, "appears twice"),
            (#"{"op":"pop"} {"op":"pop"}"#, "more text after"),
            (#"{'op':'pop'}"#, "the body is not JSON"),
            ("{}", "needs an \"op\""),
            (#"{"screen":"red"}"#, "needs an \"op\""),
            (#"{"op":1}"#, "\"op\" must be a string"),
            (#"{"op":null}"#, "\"op\" must be a string"),
            (#"{"op":"POP"}"#, "is not a change"),
            (#"{"op":"get"}"#, "is not a change"),
            (#"{"op":"watch"}"#, "is not a change"),
            (#"{"op":"if"}"#, "is not a change"),
            (#"{"op":"jump"}"#, "is not a change"),
            (#"{"op":"pop","screen":"red"}"#, "is not a member of a pop change"),
            (#"{"op":"push","screen":"blue","route":"/red"}"#, "is not a member of a push change"),
            (#"{"op":"open","screen":"blue"}"#, "is not a member of a open change"),
            (#"{"op":"next","screen":"blue"}"#, "is not a member of a next change"),
            (#"{"op":"push"}"#, "needs a non-empty \"screen\""),
            (#"{"op":"push","screen":""}"#, "needs a non-empty \"screen\""),
            (#"{"op":"open"}"#, "needs a non-empty \"route\""),
            (#"{"op":"push","screen":7}"#, "\"screen\" must be a string"),
            (#"{"op":"push","screen":"blue","data":null}"#, "\"data\" must be a string"),
            (#"{"op":"push","screen":"blue","data":["x"]}"#, "\"data\" must be a string"),
            (#"{"op":"push","screen":"blue","data":{"a":1}}"#, "\"data\" must be a string"),
            (#"{"op":"open","route":true}"#, "\"route\" must be a string"),
            ("\u{FF}", "the body is not JSON"),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "nested deeper"),
        ]
        for (json, words) in table {
            guard case .failure(let refusal) = change(json) else { XCTFail("\(json) was taken"); continue }
            XCTAssertEqual(refusal.status, 400, json)
            XCTAssertEqual(refusal.error.code, .badArgs, json)
            XCTAssertTrue(refusal.error.message.contains(words), "\(json): \(refusal.error.message)")
        }
    }

    func test_parse_dataTheLineProtocolCannotCarry_is422() {
        let table: [(String, ErrorCode)] = [
            (#"{"op":"push","screen":"blue","data":"a\nb"}"#, .badArgs),
            (#"{"op":"push","screen":"blue","data":"a\tb"}"#, .badArgs),
            (#"{"op":"next","data":"\u0000"}"#, .badArgs),
            (#"{"op":"present","screen":"blue","data":"\u007f"}"#, .badArgs),
            (#"{"op":"push","screen":"blue red"}"#, .unknownScreen),
            (#"{"op":"select","screen":"re\nd"}"#, .unknownScreen),
            (#"{"op":"open","route":"/red /blue"}"#, .badRoute),
            (#"{"op":"open","route":"/red\r"}"#, .badRoute),
        ]
        for (json, code) in table {
            guard case .failure(let refusal) = change(json) else { XCTFail("\(json) was taken"); continue }
            XCTAssertEqual(refusal.status, 422, json)
            XCTAssertEqual(refusal.error.code, code, json)
        }
    }

    func test_parse_aLineLongerThanMaxLine_is422_atTheBoundaryExactly() throws {
        // "PUSH blue " is 10 bytes.
        let fits = String(repeating: "x", count: 30)
        XCTAssertEqual(try change(#"{"op":"push","screen":"blue","data":"\#(fits)"}"#, maxLine: 40).get().line.utf8.count, 40)
        guard case .failure(let refusal) = change(#"{"op":"push","screen":"blue","data":"\#(fits)y"}"#, maxLine: 40) else {
            return XCTFail("taken")
        }
        XCTAssertEqual(refusal.status, 422)
        XCTAssertEqual(refusal.error.code, .badArgs)
        XCTAssertTrue(refusal.error.message.contains("--max-line"), refusal.error.message)
    }

    func test_parse_whatTheCatalogDecides_isLeftToTheHub() throws {
        // An unknown screen and a data rule are the hub parser's: the body is a change.
        let unknown = try change(#"{"op":"push","screen":"purple"}"#).get()
        XCTAssertEqual(refusalCode(unknown.line), .unknownScreen)
        let noData = try change(#"{"op":"push","screen":"red","data":"x"}"#).get()
        XCTAssertEqual(refusalCode(noData.line), .badArgs)
    }

    private func refusalCode(_ line: String) -> ErrorCode? {
        guard case .failure(let error)? = parser.parse(Array(line.utf8)) else { return nil }
        return error.code
    }
}
