import NavSyncClient
import XCTest

/// The one walk over `--connect`'s list, shared by the reconnecting client
/// and `navsync raw`.
final class EndpointWalkTests: XCTestCase {
    private let a = Endpoint.tcp(host: "127.0.0.1", port: 1)
    private let b = Endpoint.tcp(host: "::1", port: 2)
    private let c = Endpoint.unix(path: "/run/c.sock")

    func test_walk_startsAtTheFirstAndWrapsRound() {
        var walk = EndpointWalk([a, b, c])
        XCTAssertEqual(walk.current, a, "before any attempt the first is named")
        XCTAssertEqual([walk.advance(), walk.advance(), walk.advance(), walk.advance()], [a, b, c, a])
    }

    func test_failed_reportsARoundOnlyWhenEveryAddressFailedInARow() {
        var walk = EndpointWalk([a, b, c])
        _ = walk.advance()
        XCTAssertEqual(walk.failed("refused"), .tryNext)
        _ = walk.advance()
        XCTAssertEqual(walk.failed("timed out"), .tryNext)
        _ = walk.advance()
        XCTAssertEqual(walk.failed("no such file"), .roundFailed(first: "127.0.0.1:1: refused"))
        // The next round starts afresh, from the address after the last tried.
        XCTAssertEqual(walk.advance(), a)
        XCTAssertEqual(walk.failed("reset"), .tryNext)
        XCTAssertEqual(walk.advance(), b)
    }

    func test_succeeded_startsTheCountAgain() {
        var walk = EndpointWalk([a, b])
        _ = walk.advance()
        XCTAssertEqual(walk.failed("refused"), .tryNext)
        _ = walk.advance()
        walk.succeeded()
        _ = walk.advance()
        XCTAssertEqual(walk.failed("closed"), .tryNext, "one failure after a success is not a round")
        _ = walk.advance()
        XCTAssertEqual(walk.failed("refused"), .roundFailed(first: "127.0.0.1:1: closed"))
    }

    func test_failed_singleAddress_isARoundAtOnce() {
        var walk = EndpointWalk([b])
        XCTAssertEqual(walk.advance(), b)
        XCTAssertEqual(walk.failed("refused"), .roundFailed(first: "[::1]:2: refused"))
    }
}
