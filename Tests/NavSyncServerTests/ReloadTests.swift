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
        XCTAssertEqual(try hub.server.reload(catalog: smaller), .changed(watchersTold: 1))
        XCTAssertEqual(hub.server.catalog, smaller)
        XCTAssertEqual(watcher.run(), ["EVENT 1 open /red/blue:kept", "CATALOG"], "after the events it already had")
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
        XCTAssertEqual(watcher.run().count, 4)
    }

    func test_reload_changingTheInitialScreen_isRefused() throws {
        let hub = try Hub()
        let watcher = hub.connect(), client = hub.connect()
        watcher.run("WATCH")
        client.run("SELECT green")
        watcher.newLines()
        XCTAssertThrowsError(try hub.server.reload(catalog: flowCatalog))
        XCTAssertEqual(hub.server.catalog, .builtIn, "the old catalog stays")
        XCTAssertEqual(client.run("GET", "JOIN fresh", "GET"), ["STATE 1 /green", "STATE 0 /red", "STATE 0 /red"])
        XCTAssertEqual(watcher.run(), [], "nothing to announce")
    }

    func test_reload_sameCatalog_isUnchangedAndSilent() throws {
        let hub = try Hub()
        let watcher = hub.connect()
        watcher.run("WATCH")
        XCTAssertEqual(try hub.server.reload(catalog: .builtIn), .unchanged)
        XCTAssertEqual(watcher.run(), [])
    }

    func test_reload_catalogLine_isNeverDroppedForASlowWatcher() throws {
        let hub = try Hub(limits: limits(maxPending: 100))
        let slow = hub.connect(), actor = hub.connect()
        slow.run("WATCH")
        slow.connection.queuedWriteBytes = 1000
        actor.run("SELECT green")
        let renamed = try Catalog(initial: "red", screens: [Screen(name: "red", title: "Rouge", color: .red)])
        XCTAssertEqual(try hub.server.reload(catalog: renamed), .changed(watchersTold: 1))
        hub.flush()
        XCTAssertEqual(slow.newLines(), ["CATALOG"], "the event was dropped, the CATALOG line was not")
    }

    func test_reload_watchersKeepWatching() throws {
        let hub = try Hub()
        let watcher = hub.connect(), client = hub.connect()
        XCTAssertEqual(watcher.run("JOIN lobby", "WATCH"), ["STATE 0 /red", "STATE 0 /red"])
        let wider = try Catalog(initial: "red", screens: Catalog.builtIn.screens + [
            Screen(name: "viewC", title: "C", color: .yellow),
        ])
        XCTAssertEqual(try hub.server.reload(catalog: wider), .changed(watchersTold: 1))
        client.run("JOIN lobby", "PUSH viewC")
        XCTAssertEqual(watcher.newLines(), ["CATALOG", "EVENT 1 push /red/viewC"])
    }
}
