import NavSyncCore
@testable import NavSyncBackplane
import XCTest

/// The presence lines a daemon reads from Redis, checked like a local
/// member's `NAME` and `AT`: the good ones whole, one per line or many per
/// message, and a table of malformed ones, each refused for its own reason.
final class PresenceMessageTests: XCTestCase {
    private let bounds = PresenceBounds(maxLineBytes: 4096, maxDepth: 64)

    private func parse(_ text: String, bounds: PresenceBounds? = nil) -> PresenceMessage.Parsed {
        PresenceMessage.parse(Array(text.utf8), bounds: bounds ?? self.bounds)
    }

    func test_goodLines_parseWhole_manyPerMessage() {
        let parsed = parse("e1 M main ab.1 ana control -\ne1 M main ab.2 bo@x view /red/green:a%20b#blue\ne1 G lobby ab.3\n")
        XCTAssertEqual(parsed.rejected, [])
        XCTAssertEqual(parsed.changes.map(\.epoch), ["e1", "e1", "e1"])
        XCTAssertEqual(parsed.changes.map(\.change), [
            .member(room: "main", Member(id: "ab.1", name: "ana", role: .control)),
            .member(room: "main", Member(id: "ab.2", name: "bo@x", role: .view, at: "/red/green:a%20b#blue")),
            .gone(room: "lobby", id: "ab.3"),
        ])
    }

    func test_eachLineAlone_parsesAsInAMessage() {
        let lines = ["e1 M main ab.1 ana control -", "e1 M main ab.2 bo view /red", "e1 G main ab.1"]
        let together = parse(lines.joined(separator: "\n")).changes.map(\.change)
        let alone = lines.flatMap { parse($0).changes.map(\.change) }
        XCTAssertEqual(alone, together)
    }

    func test_sentAndReadBack_sameChanges() {
        let changes: [PresenceMessage] = (1...50).map {
            .member(room: "r\($0 % 3)", Member(id: "tag.\($0)", name: "n\($0)", role: $0 % 2 == 0 ? .view : .control,
                                                at: $0 % 5 == 0 ? nil : "/red:\($0)%0A"))
        } + [.gone(room: "r1", id: "tag.7")]
        let (messages, leftOut) = changes.messages(epoch: "e9", maxBytes: 300)
        XCTAssertEqual(leftOut, 0)
        XCTAssertGreaterThan(messages.count, 1)
        XCTAssertTrue(messages.allSatisfy { $0.utf8.count <= 300 })
        XCTAssertEqual(messages.flatMap { parse($0).changes.map(\.change) }, changes)
    }

    func test_aLineLongerThanAMessage_isLeftOut_theRestSent() {
        let long = PresenceMessage.member(room: "main", Member(id: "t.1", name: "n", role: .view, at: "/red:" + String(repeating: "x", count: 400)))
        let short = PresenceMessage.gone(room: "main", id: "t.2")
        let (messages, leftOut) = [long, short].messages(epoch: "e", maxBytes: 300)
        XCTAssertEqual(leftOut, 1)
        XCTAssertEqual(messages, ["e G main t.2"])
    }

    func test_malformedLines_eachRefusedForItsReason() {
        let longRoute = "/red:" + String(repeating: "a", count: 200_000)
        let deep = String(repeating: "/red", count: 65)
        let table: [(String, PresenceMessage.Problem)] = [
            ("e1 M main ab.1 evil\u{1B}]0;pwned\u{07} control -", .unprintable(byte: 0x1B)),
            ("e1 M main ab.1 ana control /red:\u{1B}[2J", .unprintable(byte: 0x1B)),
            ("e1 M main ab.1 ana control -\r", .unprintable(byte: 0x0D)),
            ("e1 M main ab.1 ana\tx control -", .unprintable(byte: 0x09)),
            ("e1 M main ab.1 ana\u{7F} control -", .unprintable(byte: 0x7F)),
            ("e1 M main ab.1 ané control -", .unprintable(byte: 0xC3)),
            ("e1 M main ab.1 admin admin -", .badRole),
            ("e1 M main ab.1 ana none -", .badRole),
            ("e1 M main ab.1 ana CONTROL -", .badRole),
            ("e1 M main ab.1 ana control", .malformed),
            ("e1 M main ab.1 ana control - extra", .malformed),
            ("e1 M main ab.1 ana  control -", .malformed),
            ("e1 X main ab.1", .malformed),
            ("e1 G main", .malformed),
            ("e1 G main ab.1 more", .malformed),
            ("e1", .malformed),
            (" M main ab.1 ana control -", .malformed),
            ("e1 M ma/in ab.1 ana control -", .badRoom),
            ("e1 M \(String(repeating: "r", count: 65)) ab.1 ana control -", .badRoom),
            ("e1 M main admin ana control -", .badID),
            ("e1 M main .1 ana control -", .badID),
            ("e1 M main a:b.1 ana control -", .badID),
            ("e1 M main \(String(repeating: "i", count: 39)).1 ana control -", .badID),
            ("e1 G main nodot", .badID),
            ("e1 M main ab.1 an:a control -", .badName),
            ("e1 M main ab.1 \(String(repeating: "n", count: 65)) control -", .badName),
            ("e1 M main ab.1 ana control red", .badRoute(.missingLeadingSlash)),
            ("e1 M main ab.1 ana control /", .badRoute(.empty)),
            ("e1 M main ab.1 ana control /red//green", .badRoute(.emptySegment)),
            ("e1 M main ab.1 ana control /red:%zz", .badRoute(.badEscape)),
            ("e1 M main ab.1 ana control /red:%FF", .badRoute(.notUTF8)),
            ("e1 M main ab.1 ana control /red#", .badRoute(.emptySheet)),
            ("e1 M main ab.1 ana control /red:a+b", .routeNotCanonical),
            ("e1 M main ab.1 ana control /red:%41", .routeNotCanonical),
            ("e1 M main ab.1 ana control \(longRoute)", .routeTooLong(bytes: longRoute.utf8.count)),
            ("e1 M main ab.1 ana control \(deep)", .routeTooDeep(depth: 65)),
        ]
        for (line, problem) in table {
            let parsed = parse(line)
            XCTAssertEqual(parsed.changes.count, 0, "taken: \(line.debugDescription.prefix(80))")
            XCTAssertEqual(parsed.rejected, [problem], "\(line.debugDescription.prefix(80))")
        }
        // All of them in one message, between two good lines: each is refused alone.
        let message = (["e1 G main ok.1"] + table.map(\.0) + ["e1 G main ok.2"]).joined(separator: "\n")
        let parsed = parse(message)
        XCTAssertEqual(parsed.changes.map(\.change), [.gone(room: "main", id: "ok.1"), .gone(room: "main", id: "ok.2")])
        XCTAssertEqual(parsed.rejected, table.map(\.1))
    }

    func test_routeBounds_followThisDaemonsMaxLineAndMaxDepth() {
        let tight = PresenceBounds(maxLineBytes: 64, maxDepth: 2)
        XCTAssertEqual(parse("e M main a.1 n view /red/green", bounds: tight).rejected, [])
        XCTAssertEqual(parse("e M main a.1 n view /red/green#blue", bounds: tight).rejected, [.routeTooDeep(depth: 3)])
        let fits = "/red:" + String(repeating: "a", count: 56)  // "AT " + 61 bytes = 64
        XCTAssertEqual(parse("e M main a.1 n view \(fits)", bounds: tight).rejected, [])
        XCTAssertEqual(parse("e M main a.1 n view \(fits)a", bounds: tight).rejected, [.routeTooLong(bytes: 62)])
    }

    func test_aMessageOverOneMiB_isRefusedWhole_unread() {
        let line = "e1 M main ab.1 ana control -\n"
        let count = PresenceBounds.maxMessageBytes / line.utf8.count + 1
        let payload = Array(String(repeating: line, count: count).utf8)
        XCTAssertGreaterThan(payload.count, PresenceBounds.maxMessageBytes)
        let parsed = PresenceMessage.parse(payload, bounds: bounds)
        XCTAssertEqual(parsed.changes.count, 0)
        XCTAssertEqual(parsed.rejected, [.messageTooLarge(bytes: payload.count)])
        // Exactly at the bound it is read.
        let atBound = Array(payload.prefix(PresenceBounds.maxMessageBytes))
        XCTAssertEqual(PresenceMessage.parse(atBound, bounds: bounds).changes.count,
                       PresenceBounds.maxMessageBytes / line.utf8.count)
    }

    func test_membersHashValues_checkedLikeLines() {
        func member(_ id: String, _ value: String) -> Result<Member, PresenceMessage.Problem> {
            PresenceMessage.member(id: Array(id.utf8), value: Array(value.utf8), bounds: bounds)
        }
        XCTAssertEqual(member("ab.1", "ana view /red:x"), .success(Member(id: "ab.1", name: "ana", role: .view, at: "/red:x")))
        XCTAssertEqual(member("ab.1", "ana admin -"), .failure(.badRole))
        XCTAssertEqual(member("ab\u{1B}.1", "ana view -"), .failure(.unprintable(byte: 0x1B)))
        XCTAssertEqual(member("ab.1", "ana view"), .failure(.malformed))
        XCTAssertEqual(member("ab.1", "ana view /red:\u{07}"), .failure(.unprintable(byte: 0x07)))
        XCTAssertEqual(member("nodot", "ana view -"), .failure(.badID))
    }

    func test_problemDescriptions_neverQuoteWhatWasRead() {
        let problems: [PresenceMessage.Problem] = [
            .messageTooLarge(bytes: 5), .unprintable(byte: 0x1B), .malformed, .badRoom, .badID, .badName, .badRole,
            .badRoute(.badName("\u{1B}")), .routeNotCanonical, .routeTooLong(bytes: 9), .routeTooDeep(depth: 70),
            .tooManyMembers(limit: 10),
        ]
        for problem in problems {
            XCTAssertFalse(problem.description.utf8.contains { $0 < 0x20 || $0 >= 0x7F }, "\(problem)")
        }
    }
}
