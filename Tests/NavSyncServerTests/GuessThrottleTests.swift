import XCTest
import NavSyncCore
@testable import NavSyncServer

/// The guessing throttle alone, on its own clock.
final class GuessThrottleTests: XCTestCase {
    private let guesser = PeerAddress.ipv4(0x7f00_0001)
    private let neighbour = PeerAddress.ipv4(0x7f00_0002)

    func test_guessThrottle_twentyGuessesInTheWindow_doNotThrottle_theTwentyFirstDoes() {
        var throttle = GuessThrottle()
        for i in 0..<20 {
            XCTAssertNil(throttle.retryAfterSeconds(for: guesser, now: UInt64(i) * 100), "guess \(i + 1)")
            throttle.noteGuess(from: guesser, now: UInt64(i) * 100)
        }
        XCTAssertNil(throttle.retryAfterSeconds(for: guesser, now: 2_000))
        throttle.noteGuess(from: guesser, now: 2_000)
        // The first guess (at 0) leaves the window at 10,000: 8 s from now.
        XCTAssertEqual(throttle.retryAfterSeconds(for: guesser, now: 2_000), 8)
        XCTAssertEqual(throttle.retryAfterSeconds(for: guesser, now: 9_001), 1)
        XCTAssertNil(throttle.retryAfterSeconds(for: guesser, now: 10_000))
    }

    func test_guessThrottle_anotherAddress_isUnaffected() {
        var throttle = GuessThrottle()
        for i in 0..<21 { throttle.noteGuess(from: guesser, now: UInt64(i)) }
        XCTAssertNotNil(throttle.retryAfterSeconds(for: guesser, now: 21))
        XCTAssertNil(throttle.retryAfterSeconds(for: neighbour, now: 21))
        XCTAssertNil(throttle.retryAfterSeconds(for: .local, now: 21))
    }

    func test_guessThrottle_guessesSpreadBeyondTheWindow_neverThrottle() {
        var throttle = GuessThrottle()
        // One guess every half second: 20 in any 10 s, never 21.
        for i in 0..<200 {
            let now = UInt64(i) * 500
            XCTAssertNil(throttle.retryAfterSeconds(for: guesser, now: now), "guess \(i + 1)")
            throttle.noteGuess(from: guesser, now: now)
        }
    }

    func test_guessThrottle_waitRoundsUp_toAtLeastOneSecond() {
        var throttle = GuessThrottle(guessesAllowed: 1, windowMilliseconds: 10_000)
        throttle.noteGuess(from: guesser, now: 1_000)
        throttle.noteGuess(from: guesser, now: 1_500)
        XCTAssertEqual(throttle.retryAfterSeconds(for: guesser, now: 1_500), 10)   // 9.5 s, rounded up
        XCTAssertEqual(throttle.retryAfterSeconds(for: guesser, now: 10_999), 1)   // 1 ms
        XCTAssertNil(throttle.retryAfterSeconds(for: guesser, now: 11_000))
    }

    func test_guessThrottle_pastItsBound_forgetsTheLeastRecentAddress() {
        var throttle = GuessThrottle(guessesAllowed: 1, windowMilliseconds: 10_000, addressesTracked: 3)
        let addresses = (1...4).map { PeerAddress.ipv4(UInt32($0)) }
        for address in addresses[0..<3] {
            throttle.noteGuess(from: address, now: 0)
            throttle.noteGuess(from: address, now: 0)
        }
        // The first guesses again, so the second is now the least recent.
        throttle.noteGuess(from: addresses[0], now: 1)
        throttle.noteGuess(from: addresses[3], now: 2)
        XCTAssertEqual(throttle.trackedCount, 3)
        XCTAssertNotNil(throttle.retryAfterSeconds(for: addresses[0], now: 2))
        XCTAssertNil(throttle.retryAfterSeconds(for: addresses[1], now: 2), "forgotten")
        XCTAssertNotNil(throttle.retryAfterSeconds(for: addresses[2], now: 2))
        XCTAssertNil(throttle.retryAfterSeconds(for: addresses[3], now: 2), "one guess only")
    }

    func test_guessThrottle_manyAddresses_stayWithinTheBound() {
        var throttle = GuessThrottle(addressesTracked: 1_000)
        for i in 0..<5_000 { throttle.noteGuess(from: .ipv6Network(UInt64(i)), now: UInt64(i)) }
        XCTAssertEqual(throttle.trackedCount, 1_000)
    }
}
