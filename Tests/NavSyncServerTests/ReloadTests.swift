import XCTest
import NavSyncCore
@testable import NavSyncServer

/// SIGHUP: a new catalog for new mutations; stacks already held stay.
final class ReloadTests: XCTestCase {
    func test_reload_keepsStacksNamingDroppedScreens() throws {
        let hub = try Hub()
        let watcher = hub.connect(), client = hub.connect()
        watcher.run("WATCH")
        client.run("OPEN /red/blue:kept")
        let smaller = try Catalog(initial: "red", screens: [
            Screen(name: "red", title: "Red", color: .red, next: "green"),
            Screen(name: "green", title: "Green", color: .green),
        ])
        hub.server.reload(catalog: smaller)
        XCTAssertEqual(hub.server.catalog, smaller)
        XCTAssertEqual(client.run("GET"), ["STATE 1 /red/blue:kept"])
        XCTAssertEqual(client.run("SCREENS"), ["SCREEN red red green none Red", "SCREEN green green - none Green", "END"])

        // New mutations are checked against the new catalog.
        XCTAssertTrue(client.run("PUSH blue")[0].hasPrefix("ERR unknown-screen"))
        XCTAssertTrue(client.run("OPEN /red/blue")[0].hasPrefix("ERR unknown-screen"))
        // NEXT from a screen the catalog dropped has nowhere to go.
        XCTAssertTrue(client.run("NEXT")[0].hasPrefix("ERR no-next"))
        XCTAssertEqual(client.run("GET"), ["STATE 1 /red/blue:kept"])
        // Mutations that only remove entries still work.
        XCTAssertEqual(client.run("PUSH green", "POP", "POP"), ["OK 2", "OK 3", "OK 4"])
        XCTAssertEqual(client.run("NEXT"), ["OK 5"])
        XCTAssertEqual(client.run("GET"), ["STATE 5 /green"])
        XCTAssertTrue(client.run("NEXT")[0].hasPrefix("ERR no-next"), "green has no next in the new catalog")
        XCTAssertEqual(watcher.run().count, 5)
    }

    func test_reload_changesTheInitialStackOfUntouchedRooms() throws {
        let hub = try Hub()
        let client = hub.connect()
        client.run("SELECT green")
        hub.server.reload(catalog: flowCatalog)
        XCTAssertEqual(client.run("GET", "JOIN fresh", "GET"), ["STATE 1 /green", "STATE 0 /viewA", "STATE 0 /viewA"])
        XCTAssertEqual(client.run("NEXT"), ["ERR bad-args screen viewB requires data"])
        XCTAssertEqual(client.run("NEXT some data"), ["OK 1"])
        XCTAssertEqual(client.run("GET"), ["STATE 1 /viewB:some%20data"])
    }

    func test_reload_watchersKeepWatching() throws {
        let hub = try Hub()
        let watcher = hub.connect(), client = hub.connect()
        XCTAssertEqual(watcher.run("JOIN lobby", "WATCH"), ["STATE 0 /red", "STATE 0 /red"])
        hub.server.reload(catalog: flowCatalog)
        // The untouched room now starts on the new catalog's initial screen.
        client.run("JOIN lobby", "PUSH viewC")
        XCTAssertEqual(watcher.newLines(), ["EVENT 1 push /viewA/viewC"])
    }
}
