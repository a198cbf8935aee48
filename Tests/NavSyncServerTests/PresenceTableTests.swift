import XCTest
import NavSyncCore
@testable import NavSyncServer

final class PresenceTableTests: XCTestCase {
    private func member(_ id: String) -> Member { Member(id: id, name: "n\(id)", role: .control) }

    /// A room settled early in a turn (a new follower's listing) and changed
    /// again before the turn's settling is listed once, not twice.
    func test_settledMidTurn_thenChangedAgain_listedOnce() {
        let table = PresenceTable()
        table.set(member("1"), in: "main", isLocal: true)
        XCTAssertEqual(table.roomsListedForSettling, 1)
        _ = table.settle(table.room(named: "main"))
        table.set(member("2"), in: "main", isLocal: true)
        table.remove("1", from: "main", isLocal: true)
        XCTAssertEqual(table.roomsListedForSettling, 1)
        _ = table.settleAll()
        XCTAssertEqual(table.roomsListedForSettling, 0)
        XCTAssertEqual(table.existing("main")?.members.map(\.id), ["2"])
        // Listed again by the next turn's change.
        table.set(member("3"), in: "main", isLocal: true)
        XCTAssertEqual(table.roomsListedForSettling, 1)
    }

    func test_replaceMembers_changingNothing_listsNothing() {
        let table = PresenceTable()
        table.set(member("1"), in: "main", isLocal: false)
        _ = table.settleAll()
        table.replaceMembers(of: "main", with: [member("1")])
        XCTAssertEqual(table.roomsListedForSettling, 0)
    }
}
