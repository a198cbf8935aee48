import NavSyncCore
import NavSyncWeb
import XCTest

/// A watcher's lines as server-sent events, and the events request's own
/// rules: the translator is a parser of the hub's output, so it is fed whole,
/// a byte at a time and many lines per chunk.
final class ServerSentEventsTests: XCTestCase {
    private let output = Array(("STATE 4 /red/blue:a%20b#green\nEVENT 5 push /red/blue:a%20b/red\nOK 5\n"
        + "CONTINUE 5\nCATALOG\nMEMBER 7 ada control -\nERR forbidden token expired\nBYE\n").utf8)
    private let expected = "id: 4\nevent: state\n"
        + #"data: {"room":"hall","rev":4,"route":"/red/blue:a%20b#green","stack":[{"screen":"red"},"#
        + #"{"screen":"blue","data":"a b"}],"sheets":[{"screen":"green"}]}"# + "\n\n"
        + "id: 5\nevent: change\n" + #"data: {"rev":5,"op":"push","route":"/red/blue:a%20b/red"}"# + "\n\n"
        + "event: catalog\ndata: {}\n\n"
        + "event: denied\n" + #"data: {"error":"forbidden","message":"token expired"}"# + "\n\n"

    func test_translator_wholeOutput_givesOneEventPerLineThatHasOne() {
        var translator = ServerSentEvents.Translator(room: "hall")
        XCTAssertEqual(String(decoding: translator.events(from: output), as: UTF8.self), expected)
        XCTAssertFalse(translator.holdsPartialLine)
    }

    func test_translator_denied_onlyOnceAForbiddenLineIsWhole() {
        var translator = ServerSentEvents.Translator(room: "hall")
        _ = translator.events(from: Array("STATE 4 /red\nERR bad-args x\nERR forbidden room rev".utf8))
        XCTAssertFalse(translator.denied, "other errors, and a forbidden line not yet whole, deny nothing")
        _ = translator.events(from: Array("oked\n".utf8))
        XCTAssertTrue(translator.denied)
        var whole = ServerSentEvents.Translator(room: "hall")
        _ = whole.events(from: output)
        XCTAssertTrue(whole.denied)
    }

    func test_translator_byteAtATime_givesTheSameEvents() {
        var translator = ServerSentEvents.Translator(room: "hall")
        var events: [UInt8] = []
        for byte in output {
            events += translator.events(from: [byte])
        }
        XCTAssertEqual(String(decoding: events, as: UTF8.self), expected)
    }

    func test_translator_manyLinesPerChunk_cutAnywhere_givesTheSameEvents() {
        for cut in 1..<output.count {
            var translator = ServerSentEvents.Translator(room: "hall")
            var events = translator.events(from: output[..<cut])
            XCTAssertEqual(translator.holdsPartialLine, output[cut - 1] != UInt8(ascii: "\n"), "cut at \(cut)")
            events += translator.events(from: output[cut...])
            XCTAssertEqual(String(decoding: events, as: UTF8.self), expected, "cut at \(cut)")
        }
    }

    func test_eventsOfLines_isWhatTheTranslatorGives_forASharedTurn() {
        let turn = Array("EVENT 9 pop /red\nEVENT 10 next /green\n".utf8)
        var translator = ServerSentEvents.Translator(room: "r")
        XCTAssertEqual(ServerSentEvents.events(ofLines: turn, room: "r"), translator.events(from: turn))
    }

    func test_malformedLines_giveNoEvent() {
        for line in ["STATE x /red", "STATE 3 ", "STATE 3 /red:%zz", "EVENT 3 pop", "EVENT x pop /red", "CATALOG x",
                     "ERR", "ERR conflict current=3", "", "\u{FF}", "OK", "PONG"] {
            XCTAssertEqual(ServerSentEvents.event(forLine: line, room: "r"), "", line)
        }
    }

    func test_eventData_holdsNoLineBreak_evenWhenTheRoutesDataDoes() {
        let state = RoomState(Navigation(stack: [RouteEntry(screen: "blue", data: "a\nb\r\u{2028}")]), revision: 2)
        let event = ServerSentEvents.state(room: "r", state)
        XCTAssertEqual(event.split(separator: "\n").count, 3, event)
        XCTAssertTrue(event.hasSuffix("}\n\n"))
    }

    func test_fixedBlocks() {
        XCTAssertEqual(String(decoding: ServerSentEvents.retryBlock, as: UTF8.self), "retry: 2000\n\n")
        XCTAssertEqual(String(decoding: ServerSentEvents.ping, as: UTF8.self), ": ping\n\n")
    }

    // MARK: - The request

    private func read(_ query: Substring?, _ lastEventID: String? = nil) -> Result<EventStreamRequest, EventStreamRequest.Refusal> {
        EventStreamRequest.read(query: query, lastEventID: lastEventID)
    }

    func test_request_resume_lastEventIDWinsOverSince() throws {
        XCTAssertNil(try read(nil).get().resumeAfter)
        XCTAssertEqual(try read("since=4").get().resumeAfter, 4)
        XCTAssertEqual(try read(nil, "7").get().resumeAfter, 7)
        XCTAssertEqual(try read("since=4", "7").get().resumeAfter, 7)
        XCTAssertEqual(try read("since=0").get().resumeAfter, 0)
    }

    func test_request_badLastEventID_isIgnored_badSince_isRefused() throws {
        XCTAssertNil(try read(nil, "abc").get().resumeAfter)
        XCTAssertNil(try read(nil, "-1").get().resumeAfter)
        XCTAssertEqual(try read("since=3", "x").get().resumeAfter, 3)
        for bad in ["since=", "since=x", "since=-1", "since=1.5", "since=18446744073709551616", "since=%31"] {
            XCTAssertThrowsError(try read(Substring(bad)).get(), bad)
        }
    }

    func test_request_tokenAndName_areDecoded_aBadNameIsRefused() throws {
        let request = try read("token=a%2Bb+c&name=wall-1&other=x").get()
        XCTAssertEqual(request.token, "a+b c")
        XCTAssertEqual(request.memberName, "wall-1")
        XCTAssertNil(try read("token=").get().token)
        for bad in ["name=", "name=a%20b", "name=%zz", "name=" + String(repeating: "n", count: 65)] {
            XCTAssertThrowsError(try read(Substring(bad)).get(), bad)
        }
    }
}
