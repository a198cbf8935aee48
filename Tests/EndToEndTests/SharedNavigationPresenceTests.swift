import Foundation
import NavSyncKit
import XCTest

/// NavSyncKit's presence against the built daemon: `members` changes
/// as others arrive, look elsewhere and leave; `look(at:)` and `follow()`
/// are seen by the others and change nothing in the room.
@MainActor
final class SharedNavigationPresenceTests: XCTestCase {
    func test_members_changeOnArrivalLookAndDeparture() async throws {
        let daemon = try DaemonProcess(state: "none")
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let ada = SharedNavigation<NavEntry>(connect: address, room: "kit", name: "ada")
        try await ada.start()
        // The listing follows the state start() waits for.
        await eventually("ada listed") { ada.members.map(\.name) == ["ada"] }
        XCTAssertEqual(ada.me?.name, "ada")
        XCTAssertEqual(ada.me?.role, .control)
        XCTAssertNil(ada.me?.at)

        let bo = SharedNavigation<NavEntry>(connect: address, room: "kit", name: "bo")
        try await bo.start()
        await eventually("ada sees bo arrive") { ada.members.map(\.name) == ["ada", "bo"] }
        await eventually("bo lists both") { bo.members.map(\.name) == ["ada", "bo"] }

        try await bo.look(at: [NavEntry("green"), NavEntry("blue", data: "a note")])
        await eventually("ada sees where bo looks") { ada.members.last?.at == "/green/blue:a%20note" }
        XCTAssertEqual(ada.revision, 0, "looking changes nothing in the room")
        XCTAssertEqual(ada.stack, [NavEntry("red")])
        do {
            try await bo.look(at: [NavEntry("nosuch")])
            XCTFail("an unknown screen was accepted")
        } catch NavSyncError.server(let code, _) {
            XCTAssertEqual(code, "unknown-screen")
        }
        try await bo.follow()
        await eventually("ada sees bo follow again") { ada.members.last?.at == nil }

        await bo.stop()
        await eventually("ada sees bo leave") { ada.members.map(\.name) == ["ada"] }
        await ada.stop()
    }
}
