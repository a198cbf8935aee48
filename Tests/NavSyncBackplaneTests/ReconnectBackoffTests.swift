import XCTest
@testable import NavSyncBackplane

final class ReconnectBackoffTests: XCTestCase {
    func test_nextDelay_doublesUpToTheCap() {
        var backoff = ReconnectBackoff()
        XCTAssertEqual((0..<7).map { _ in backoff.nextDelay() }, [50, 100, 200, 400, 800, 1_000, 1_000])
    }

    func test_nextDelay_redisLoading_asksSoonWithoutBackingOff() {
        var backoff = ReconnectBackoff()
        XCTAssertEqual(backoff.nextDelay(), 50)
        backoff.redisIsLoading = true
        XCTAssertEqual(backoff.nextDelay(), 20)
        XCTAssertEqual(backoff.nextDelay(), 100, "loading once does not count as a failed attempt")
    }

    func test_reset_startsTheNextOutageFromTheShortestWait() {
        var backoff = ReconnectBackoff()
        _ = backoff.nextDelay()
        _ = backoff.nextDelay()
        backoff.reset()
        XCTAssertEqual(backoff.nextDelay(), 50)
    }
}
