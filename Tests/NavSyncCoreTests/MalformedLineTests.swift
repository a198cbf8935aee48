import XCTest
import NavSyncCore

/// Every line here must be refused with exactly the listed code, and the
/// message must be a single printable line.
final class MalformedLineTests: XCTestCase {
    private struct Row {
        let bytes: [UInt8]
        let code: ErrorCode
        let sourceLine: UInt

        init(_ text: String, _ code: ErrorCode, line: UInt = #line) {
            bytes = Array(text.utf8)
            self.code = code
            sourceLine = line
        }

        init(bytes: [UInt8], _ code: ErrorCode, line: UInt = #line) {
            self.bytes = bytes
            self.code = code
            sourceLine = line
        }
    }

    private static let maxDepth = 64
    private static let tooDeep = "/red" + String(repeating: "/green", count: maxDepth)
    private static let longName = String(repeating: "a", count: Names.maxLength + 1)

    private let rows: [Row] = [
        // Verbs
        Row("FROB", .unknownCommand),
        Row("GETT", .unknownCommand),
        Row("SELECTred", .unknownCommand),
        Row("\u{17F}elect red", .unknownCommand),
        Row("STATE 1 /red", .unknownCommand),
        Row("OK", .unknownCommand),

        // IF
        Row("IF", .badArgs),
        Row("IF 3", .badArgs),
        Row("IF x SELECT red", .badArgs),
        Row("IF -1 POP", .badArgs),
        Row("IF 1.5 POP", .badArgs),
        Row("IF 18446744073709551616 POP", .badArgs),
        Row("IF 3 GET", .badArgs),
        Row("IF 3 WATCH", .badArgs),
        Row("IF 3 QUIT", .badArgs),
        Row("IF 3 IF 2 POP", .badArgs),
        Row("IF 3 FROB", .unknownCommand),
        Row("IF x SELECT purple", .badArgs),
        Row("IF 3 SELECT purple", .unknownScreen),
        Row("IF 3 OPEN /", .badRoute),
        Row("IF 3 POP now", .badArgs),

        // SELECT / PUSH
        Row("SELECT", .badArgs),
        Row("SELECT   \t", .badArgs),
        Row("SELECT purple", .unknownScreen),
        Row("SELECT Red", .unknownScreen),
        Row("SELECT red data", .badArgs),
        Row("SELECT green some note", .badArgs),
        Row("PUSH", .badArgs),
        Row("PUSH purple", .unknownScreen),
        Row("PUSH red x", .badArgs),

        // POP / ROOT
        Row("POP now", .badArgs),
        Row("ROOT please", .badArgs),

        // Sheets and resume
        Row("PRESENT", .badArgs),
        Row("PRESENT  \t", .badArgs),
        Row("PRESENT purple", .unknownScreen),
        Row("PRESENT red data", .badArgs),
        Row("DISMISS now", .badArgs),
        Row("IF 3 PRESENT", .badArgs),
        Row("IF 3 DISMISS x", .badArgs),
        Row("OPEN /red#", .badRoute),
        Row("OPEN #red", .badRoute),
        Row("OPEN /red##x", .badRoute),
        Row("OPEN /red#blue/green", .badRoute),
        Row("OPEN /red#purple", .unknownScreen),
        Row("OPEN /red#red:data", .badArgs),
        Row("OPEN /red#blue:%2", .badRoute),
        Row("OPEN /red#" + String(repeating: "#green", count: 1), .badRoute),
        Row("WATCH -1", .badArgs),
        Row("WATCH 99999999999999999999999", .badArgs),
        Row("WATCH 18446744073709551616", .badArgs),
        Row("WATCH 1 2", .badArgs),
        Row("WATCH 0x10", .badArgs),
        Row("WATCH +5", .badArgs),
        Row("MESSAGES all", .badArgs),

        // OPEN
        Row("OPEN", .badArgs),
        Row("OPEN /red /green", .badArgs),
        Row("OPEN /", .badRoute),
        Row("OPEN red", .badRoute),
        Row("OPEN :red", .badRoute),
        Row("OPEN /red//green", .badRoute),
        Row("OPEN /red/", .badRoute),
        Row("OPEN //red", .badRoute),
        Row("OPEN /:x", .badRoute),
        Row("OPEN /blue:%zz", .badRoute),
        Row("OPEN /blue:%4", .badRoute),
        Row("OPEN /blue:%", .badRoute),
        Row("OPEN /blue:%g0", .badRoute),
        Row("OPEN /blue:%ff", .badRoute),
        Row("OPEN /blue:%C3%28", .badRoute),
        Row("OPEN /blue:%ED%A0%80", .badRoute),
        Row("OPEN /re$d", .badRoute),
        Row("OPEN /" + MalformedLineTests.longName, .badRoute),
        Row("OPEN /purple", .unknownScreen),
        Row("OPEN /red/purple", .unknownScreen),
        Row("OPEN /RED", .unknownScreen),
        Row("OPEN /red:x", .badArgs),
        Row("OPEN " + MalformedLineTests.tooDeep, .limit),

        // JOIN
        Row("JOIN", .badArgs),
        Row("JOIN bad/room", .badArgs),
        Row("JOIN two rooms", .badArgs),
        Row("JOIN " + MalformedLineTests.longName, .badArgs),
        Row("JOIN caf\u{E9}", .badArgs),
        Row("JOIN room:1", .badArgs),

        // HELLO / AUTH
        Row("HELLO 2", .badArgs),
        Row("HELLO 1 extra", .badArgs),
        Row("HELLO one", .badArgs),
        Row("AUTH", .badArgs),
        Row("AUTH  \t ", .badArgs),

        // Commands without arguments
        Row("GET extra", .badArgs),
        Row("WATCH now", .badArgs),
        Row("UNWATCH now", .badArgs),
        Row("SCREENS all", .badArgs),
        Row("STATS all", .badArgs),
        Row("ROOMS main", .badArgs),
        Row("QUIT now", .badArgs),
        Row("HELP me", .badArgs),

        // Encoding
        Row(bytes: [0xFF], .badEncoding),
        Row(bytes: Array("GET ".utf8) + [0xC3], .badEncoding),
        Row(bytes: Array("PUSH blue ".utf8) + [0xFE, 0x41], .badEncoding),
        Row(bytes: [0xC0, 0xAF], .badEncoding),                         // overlong "/"
        Row(bytes: Array("PING ".utf8) + [0xED, 0xA0, 0x80], .badEncoding), // surrogate
        Row(bytes: [0x80] + Array("GET".utf8), .badEncoding),           // stray continuation
        Row(bytes: [0xF4, 0x90, 0x80, 0x80], .badEncoding),             // above U+10FFFF
    ]

    func test_malformedLines_mapToExpectedErrorCodes() {
        let parser = CommandParser(catalog: .builtIn, maxDepth: Self.maxDepth)
        XCTAssertGreaterThanOrEqual(rows.count, 30)
        for row in rows {
            let shown = String(decoding: row.bytes, as: UTF8.self).debugDescription
            switch parser.parse(row.bytes) {
            case .failure(let error)?:
                XCTAssertEqual(error.code, row.code, "\(shown): \(error.message)", line: row.sourceLine)
                XCTAssertFalse(error.message.isEmpty, "\(shown) has no message", line: row.sourceLine)
                XCTAssertFalse(error.message.contains(where: { $0.isNewline }),
                               "\(shown) message spans lines", line: row.sourceLine)
            case .success(let command)?:
                XCTFail("\(shown) was accepted as \(command)", line: row.sourceLine)
            case nil:
                XCTFail("\(shown) was ignored as blank", line: row.sourceLine)
            }
        }
    }

    func test_malformedLines_tooDeepRouteIsExactlyOneOverTheLimit() {
        // Guards the table's limit row: one entry fewer must be accepted.
        let parser = CommandParser(catalog: .builtIn, maxDepth: Self.maxDepth)
        let deepest = "OPEN /red" + String(repeating: "/green", count: Self.maxDepth - 1)
        guard case .success(.mutate(.open(let route), nil))? = parser.parse(Array(deepest.utf8)) else {
            return XCTFail("a route of exactly max depth was refused")
        }
        XCTAssertEqual(route.depth, Self.maxDepth)
    }

    func test_malformedLines_ifOrder_revisionFormIsCheckedFirst() {
        let parser = CommandParser(catalog: .builtIn, maxDepth: Self.maxDepth)
        guard case .failure(let error)? = parser.parse(Array("IF x SELECT purple".utf8)) else {
            return XCTFail("IF x SELECT purple was accepted")
        }
        XCTAssertEqual(error.code, .badArgs, "a bad revision wins over an unknown screen: \(error.message)")
    }
}
