import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The guessing throttle on the hub: what a throttled address is
/// answered on each door, what it counts, and who it does not touch.
final class AuthThrottleTests: XCTestCase {
    private let token = "s3cret-presenter-token"
    private let guesser = PeerAddress.ipv4(0x7f00_0001)

    /// 21 guesses from `address`, three to a connection (each third closes it).
    private func guess21(_ hub: Hub, from address: PeerAddress) {
        for connection in 0..<7 {
            let client = hub.connect(address: address)
            for attempt in 0..<3 {
                XCTAssertEqual(client.run("AUTH wrong-\(connection)-\(attempt)"), ["ERR auth-failed wrong token"])
            }
        }
    }

    func test_authThrottle_pastTwentyGuesses_evenTheRightTokenIsAnsweredThrottled_unchecked() throws {
        let hub = try Hub(token: token)
        guess21(hub, from: guesser)
        let client = hub.connect(address: guesser)
        XCTAssertEqual(client.run("AUTH \(token)"), ["ERR auth-failed throttled, retry in 10 s"])
        XCTAssertTrue(client.run("GET")[0].hasPrefix("ERR auth-required "))
        // Throttled answers count towards the connection's three strikes.
        XCTAssertEqual(client.run("AUTH \(token)", "AUTH \(token)"),
                       ["ERR auth-failed throttled, retry in 10 s", "ERR auth-failed throttled, retry in 10 s"])
        XCTAssertTrue(client.connection.isClosed)
        let admin = hub.connect(address: .ipv4(0x0a00_0001))
        XCTAssertEqual(admin.run("AUTH \(token)"), ["OK 0"])
        let figures = admin.stats()
        XCTAssertEqual(figures["auth_failures"], "24")
        XCTAssertEqual(figures["auth_throttled"], "3")
        XCTAssertTrue(hub.server.metricsText().contains("navsync_auth_throttled_total 3\n"))
    }

    func test_authThrottle_anotherAddress_andTheSameAddressOnceTheWindowPassed_getIn() throws {
        let hub = try Hub(token: token)
        guess21(hub, from: guesser)
        XCTAssertEqual(hub.connect(address: .ipv4(0x7f00_0002)).run("AUTH \(token)"), ["OK 0"])
        XCTAssertEqual(hub.connect(address: .local).run("AUTH \(token)"), ["OK 0"])
        // A throttled attempt is no guess: it does not stretch the throttle.
        hub.clock = 5
        XCTAssertEqual(hub.connect(address: guesser).run("AUTH \(token)"), ["ERR auth-failed throttled, retry in 5 s"])
        hub.clock = 10
        XCTAssertEqual(hub.connect(address: guesser).run("AUTH \(token)"), ["OK 0"])
    }

    /// The Bearer check as the web door's port makes it for a session.
    private func bearer(_ token: String, _ hub: Hub, _ session: Session) -> Credential {
        hub.server.access.credential(bearer: token, from: session.connection.peerAddress, label: session.label)
    }

    func test_authThrottle_bearerHeaders_areGuessesAndThrottledAlike() throws {
        let hub = try Hub(token: token)
        let web = hub.connect(address: guesser)
        for _ in 0..<21 {
            XCTAssertEqual(bearer("wrong-bearer", hub, web.session), .wrong)
        }
        XCTAssertEqual(bearer(token, hub, web.session), .throttled(retryAfterSeconds: 10))
        // The line protocol from the same address is throttled too.
        XCTAssertEqual(hub.connect(address: guesser).run("AUTH \(token)"), ["ERR auth-failed throttled, retry in 10 s"])
        let other = hub.connect(address: .ipv6Network(0x2001_0db8_0000_0001))
        XCTAssertEqual(bearer(token, hub, other.session), .granted(ServerConfig.soleGrant(token).grant))
        XCTAssertEqual(hub.server.access.failures, 23)
        XCTAssertEqual(hub.server.access.throttledCount, 2)
    }
}
