import XCTest
import NavSyncCore
@testable import NavSyncServer

/// Sheets through the hub: replies, events, persistence, MESSAGES.
final class SheetTests: XCTestCase {
    func test_presentAndDismiss_areAcknowledgedAndBroadcast() throws {
        let hub = try Hub()
        let actor = hub.connect(), watcher = hub.connect()
        XCTAssertEqual(watcher.run("WATCH"), ["STATE 0 /red"])
        XCTAssertEqual(actor.run("PRESENT blue a note"), ["OK 1"])
        XCTAssertEqual(actor.run("PUSH green"), ["OK 2"])
        XCTAssertEqual(actor.run("DISMISS"), ["OK 3"])
        XCTAssertEqual(watcher.run(), ["EVENT 1 present /red#blue:a%20note", "EVENT 2 push /red/green#blue:a%20note",
                                       "EVENT 3 dismiss /red/green"])
        XCTAssertEqual(actor.run("GET"), ["STATE 3 /red/green"])
    }

    func test_dismissWithoutSheet_isNoSheetAndChangesNothing() throws {
        let hub = try Hub()
        let actor = hub.connect()
        let reply = actor.run("DISMISS")
        XCTAssertTrue(reply.first?.hasPrefix("ERR no-sheet ") == true, "\(reply)")
        XCTAssertEqual(actor.run("IF 0 DISMISS").first?.hasPrefix("ERR no-sheet "), true)
        XCTAssertEqual(actor.run("GET"), ["STATE 0 /red"])
    }

    func test_presentPastMaxDepth_isLimit() throws {
        var small = Limits()
        small.maxDepth = 2
        let hub = try Hub(limits: small)
        let actor = hub.connect()
        XCTAssertEqual(actor.run("PRESENT green"), ["OK 1"])
        XCTAssertEqual(actor.run("PRESENT blue").first?.hasPrefix("ERR limit "), true)
        XCTAssertEqual(actor.run("PUSH blue").first?.hasPrefix("ERR limit "), true)
        XCTAssertEqual(actor.run("OPEN /red#green#blue").first?.hasPrefix("ERR limit "), true)
        XCTAssertEqual(actor.run("GET"), ["STATE 1 /red#green"])
    }

    func test_selectOverSheets_clearsThem_andOpenSetsThem() throws {
        let hub = try Hub()
        let actor = hub.connect()
        XCTAssertEqual(actor.run("OPEN /red#blue:x#green"), ["OK 1"])
        XCTAssertEqual(actor.run("OPEN /red#blue:x#green"), ["OK 1"], "the same route again is a no-op")
        XCTAssertEqual(actor.run("SELECT red"), ["OK 2"], "dropping the sheets is a change")
        XCTAssertEqual(actor.run("GET"), ["STATE 2 /red"])
    }

    func test_sheets_areJournaledAndReload() throws {
        let hub = try Hub(persistence: .always)
        let actor = hub.connect()
        XCTAssertEqual(actor.run("PRESENT blue #1"), ["OK 1"])
        XCTAssertEqual(hub.storage!.lines.last, #"{"op":"present","rev":1,"room":"main","route":"/red#blue:%231"}"#)
        let reloaded = try JournalFile.load(hub.storage!.bytes!).rooms
        XCTAssertEqual(reloaded["main"], RoomState(navigation("/red#blue:%231"), revision: 1))
        let restarted = try Hub(rooms: reloaded, persistence: .always)
        XCTAssertEqual(restarted.connect().run("DISMISS"), ["OK 2"])
    }

    func test_messages_listsScreensWithAMessageInCatalogOrder() throws {
        let catalog = try Catalog(initial: "a", screens: [
            Screen(name: "a", title: "A", color: .red, message: "first one"),
            Screen(name: "b", title: "B", color: .red),
            Screen(name: "c", title: "C", color: .red, message: "last"),
        ])
        let hub = try Hub(catalog: catalog)
        XCTAssertEqual(hub.connect().run("MESSAGES"), ["MESSAGE a first one", "MESSAGE c last", "END"])
    }
}
