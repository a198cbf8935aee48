import NavSyncCore
import XCTest
import NavSyncClient

/// `ERR auth-failed throttled, retry in N s` is transient: the client
/// waits as told and asks again, where any other refused token stops it.
final class SyncClientThrottleTests: XCTestCase {
    func test_throttledAuth_oneShot_waitsTheSecondsNamed_thenSendsItsRequestAgain() {
        var h = Harness(.oneShot(room: nil, token: "presenter-token-0001"))
        let get = h.submit(.get)
        h.start()
        h.connected()
        XCTAssertEqual(h.takeSent(), ["AUTH presenter-token-0001", "GET"])
        h.receive("ERR auth-failed throttled, retry in 4 s")
        XCTAssertFalse(h.takeAll().contains(.disconnect), "the GET's answer is still to come")
        // Nothing ran for want of a token: the GET waits for the next connection.
        h.receive("ERR auth-required AUTH <token> first")
        let actions = h.takeAll()
        XCTAssertTrue(actions.contains(.disconnect))
        XCTAssertFalse(actions.contains { if case .note(.reply) = $0 { return true } else { return false } })
        XCTAssertEqual(h.client.link, .waiting(retryAt: h.now + 4000, failures: 0, reason: "ERR auth-failed throttled, retry in 4 s"))
        h.advance(3999)
        XCTAssertFalse(h.takeAll().contains(.connect))
        h.advance(1)
        XCTAssertTrue(h.takeAll().contains(.connect))
        h.connected()
        XCTAssertEqual(h.takeSent(), ["AUTH presenter-token-0001", "GET"])
        h.receive("OK 0", "STATE 3 /green")
        XCTAssertTrue(h.takeNotes().contains(.reply(get, .state(RoomState(stack: [RouteEntry(screen: "green")], revision: 3)))))
    }

    func test_throttledAuth_anAnswerTheAnonymousRoleGave_isTheCallers() {
        var h = Harness(.oneShot(room: nil, token: "presenter-token-0001"))
        let get = h.submit(.get)
        h.start()
        h.connected()
        _ = h.takeAll()
        // Under --anonymous view the GET runs without the token.
        h.receive("ERR auth-failed throttled, retry in 2 s", "STATE 1 /blue")
        let notes = h.takeNotes()
        XCTAssertTrue(notes.contains(.reply(get, .state(RoomState(stack: [RouteEntry(screen: "blue")], revision: 1)))), "\(notes)")
    }

    func test_wrongToken_stillStops() {
        var h = Harness(.oneShot(room: nil, token: "presenter-token-0001"))
        _ = h.submit(.get)
        h.start()
        h.connected()
        h.receive("ERR auth-failed wrong token", "ERR auth-required AUTH <token> first")
        XCTAssertEqual(h.client.link, .stopped(reason: "ERR auth-failed wrong token"))
    }

    func test_throttledRetrySeconds_readsOnlyTheThrottledForm() {
        func error(_ line: String) -> ServerError {
            guard case .error(let error) = ServerLine.parse(line) else { fatalError(line) }
            return error
        }
        XCTAssertEqual(error("ERR auth-failed throttled, retry in 9 s").throttledRetrySeconds, 9)
        XCTAssertNil(error("ERR auth-failed wrong token").throttledRetrySeconds)
        XCTAssertNil(error("ERR forbidden throttled, retry in 9 s").throttledRetrySeconds)
        XCTAssertNil(error("ERR auth-failed throttled, retry in soon").throttledRetrySeconds)
    }
}
