import XCTest
import NavSyncClient
import NavSyncCore

final class BackoffTests: XCTestCase {
    func test_bounds_doubleFromTheInitialStep_upToTheCap() {
        let backoff = ReconnectBackoff(initialMilliseconds: 200, maximumMilliseconds: 3000)
        XCTAssertEqual(backoff.bounds(failures: 1), 100...200)
        XCTAssertEqual(backoff.bounds(failures: 2), 200...400)
        XCTAssertEqual(backoff.bounds(failures: 4), 800...1600)
        XCTAssertEqual(backoff.bounds(failures: 5), 1500...3000)
        XCTAssertEqual(backoff.bounds(failures: 500), 1500...3000, "no overflow however long the outage")
        XCTAssertEqual(backoff.bounds(failures: 0), 100...200)
    }

    func test_delay_staysInsideItsBounds_andIsJittered() {
        let backoff = ReconnectBackoff()
        var random = SplitMix64(seed: 42)
        for failures in 1...12 {
            var seen = Set<UInt64>()
            for _ in 0..<200 {
                let wait = backoff.delay(failures: failures, using: &random)
                XCTAssertTrue(backoff.bounds(failures: failures).contains(wait))
                XCTAssertLessThanOrEqual(wait, backoff.maximumMilliseconds)
                seen.insert(wait)
            }
            XCTAssertGreaterThan(seen.count, 20, "waits spread out so clients do not return in lockstep")
        }
    }

    func test_sameSeed_sameWaits() {
        var a = SplitMix64(seed: 9), b = SplitMix64(seed: 9)
        let backoff = ReconnectBackoff()
        XCTAssertEqual((1...6).map { backoff.delay(failures: $0, using: &a) },
                       (1...6).map { backoff.delay(failures: $0, using: &b) })
    }
}
