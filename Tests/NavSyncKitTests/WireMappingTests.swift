import NavSyncClient
import NavSyncCore
@testable import NavSyncKit
@testable import navsync_abc
import XCTest

final class WireMappingTests: XCTestCase {
    func test_screens_routeEntriesBecomeTypedScreens() throws {
        let entries = try Route.decode("/viewA/viewB:some%20Data%20from%20A/viewC").get().stack
        let screens = try WireMapping.screens(entries, as: ABCScreen.self).get()
        XCTAssertEqual(screens, [.viewA, .viewB(someData: "some Data from A"), .viewC])
    }

    func test_screens_refusedEntry_namesItAndGuessesNothing() {
        for (route, refused) in [("/viewA/red", "red"), ("/viewB", "viewB"), ("/viewA/viewC:extra", "viewC")] {
            let entries = try! Route.decode(route).get().stack
            switch WireMapping.screens(entries, as: ABCScreen.self) {
            case .success(let screens): XCTFail("\(route) became \(screens)")
            case .failure(let refusal):
                XCTAssertEqual(refusal.entry.screen, refused, route)
                XCTAssertTrue(refusal.reason.contains(refused), refusal.reason)
            }
        }
    }

    func test_entry_roundTripsEveryCase() throws {
        for screen in [ABCScreen.viewA, .viewB(someData: "ü /:#%"), .viewC] {
            let entry = try WireMapping.entry(screen)
            XCTAssertEqual(ABCScreen(screen: entry.screen, data: entry.data), screen)
        }
    }

    func test_data_isTrimmedAndEmptyIsNone() throws {
        XCTAssertEqual(try WireMapping.data("  a b \t"), "a b")
        XCTAssertNil(try WireMapping.data(""))
        XCTAssertNil(try WireMapping.data(" \t "))
        XCTAssertNil(try WireMapping.data(nil))
        XCTAssertEqual(NavEntry("x", data: "  y ").data, "y")
        XCTAssertNil(NavEntry("x", data: "   ").data)
    }

    func test_request_refusesWhatCannotBeOneLine() {
        let bad: [NavMutation<NavEntry>] = [
            .push(NavEntry("blue", data: "two\nlines")), .select(NavEntry("red", data: "a\rb")),
            .next(data: "x\ny"), .present(NavEntry("a b")), .push(NavEntry("")),
            .open(stack: [], sheets: []), .open(stack: [NavEntry("red")], sheets: [NavEntry("blue", data: "\n")]),
            .select(NavEntry(String(repeating: "x", count: 65))),
        ]
        for mutation in bad {
            XCTAssertThrowsError(try WireMapping.request(mutation), "\(mutation)") { error in
                guard case NavSyncError.invalidData = error else { return XCTFail("\(mutation): \(error)") }
            }
        }
    }

    func test_request_linesForEveryMutation() throws {
        let cases: [(NavMutation<ABCScreen>, String)] = [
            (.select(.viewA), "SELECT viewA"),
            (.push(.viewB(someData: " from A ")), "PUSH viewB from A"),
            (.pop, "POP"), (.root, "ROOT"), (.dismiss, "DISMISS"),
            (.present(.viewB(someData: "x")), "PRESENT viewB x"),
            (.next(data: "hi there"), "NEXT hi there"), (.next(data: "  "), "NEXT"),
            (.open(stack: [.viewA, .viewB(someData: "a b")], sheets: [.viewC]), "OPEN /viewA/viewB:a%20b#viewC"),
        ]
        for (mutation, line) in cases {
            XCTAssertEqual(try WireMapping.request(mutation).line, line)
        }
        let guarded = ClientRequest.guarded(revision: 7, change: try WireMapping.request(NavMutation<ABCScreen>.pop))
        XCTAssertEqual(guarded.line, "IF 7 POP")
        XCTAssertNil(guarded.problem)
        XCTAssertNotNil(ClientRequest.guarded(revision: 7, change: .get).problem)
    }
}
