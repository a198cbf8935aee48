import NavSyncClient
import NavSyncCore
import XCTest

/// The one line a command-line client adds to a `forbidden` refusal.
final class GrantAdviceTests: XCTestCase {
    private func forbidden(_ message: String) -> ServerError {
        ServerError(code: "forbidden", message: message, line: "ERR forbidden \(message)")
    }

    func test_roomOutsideTheGrant_namesTheRoom_theAllowedRooms_andASuggestedRoom() {
        let identity = Identity(id: "4", name: "wall", role: "view", rooms: "hall,lobby")
        XCTAssertEqual(GrantAdvice.forbidden(forbidden("that room is outside this connection's grant"),
                                             room: "kitchen", identity: identity),
                       "room kitchen is outside this token's grant, which allows hall, lobby; try --room hall")
        XCTAssertEqual(GrantAdvice.forbidden(forbidden("room main is outside this connection's grant"),
                                             room: "main", identity: identity),
                       "room main is outside this token's grant, which allows hall, lobby; try --room hall")
    }

    func test_roomOutsideTheGrant_withoutWhoami_stillNamesTheRoom() {
        for identity in [nil, Identity(id: "4", name: "anon", role: "none", rooms: "-")] {
            XCTAssertEqual(GrantAdvice.forbidden(forbidden("that room is outside this connection's grant"),
                                                 room: "kitchen", identity: identity),
                           "room kitchen is outside this token's grant; ask for a token that includes it, "
                           + "or pass --room with one of the token's rooms")
        }
    }

    func test_otherRefusals_sayTheGrantDoesNotAllowIt() {
        XCTAssertEqual(GrantAdvice.forbidden(forbidden("a view grant may not change a room"), room: "hall",
                                             identity: Identity(id: "4", name: "wall", role: "view", rooms: "hall")),
                       "this token's grant does not allow that (a view grant may not change a room)")
    }
}
