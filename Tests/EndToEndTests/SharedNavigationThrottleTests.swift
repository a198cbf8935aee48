import Foundation
import Glibc
import NavSyncKit
import XCTest

/// NavSyncKit and the guessing throttle: `throttled` is transient, so
/// `start()` waits the seconds the daemon names and succeeds, instead of
/// failing as it does for a wrong token.
@MainActor
final class SharedNavigationThrottleTests: XCTestCase {
    func test_start_fromAThrottledAddress_waitsItOut_thenConnects() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let grants = try dir.write("grants", DaemonGrantsTests.grantsText)
        chmod(grants, 0o600)
        let daemon = try DaemonProcess(arguments: ["--tokens", grants], state: "none")
        defer { daemon.stop() }
        // 21 wrong tokens from 127.0.0.1, the address the library connects from.
        for connection in 0..<7 {
            let guesser = try daemon.connect()
            for attempt in 0..<3 {
                XCTAssertEqual(try guesser.request("AUTH guess-\(connection)-\(attempt)-0000000000"), "ERR auth-failed wrong token")
            }
        }
        let presenter = SharedNavigation<NavEntry>(connect: "127.0.0.1:\(daemon.port)", token: DaemonGrantsTests.presenter)
        try await presenter.start()
        XCTAssertEqual(presenter.connection, .connected)
        XCTAssertEqual(presenter.role, .control)
        try await presenter.push(NavEntry("blue"))
        // It was told `throttled` at least once on the way.
        let admin = try LineClient(port: daemon.port, source: "127.0.0.2")
        XCTAssertEqual(try admin.request("AUTH \(DaemonGrantsTests.presenter)"), "OK 1")
        let throttled = try admin.requestList("STATS").first { $0.hasPrefix("STAT auth_throttled ") }
        XCTAssertGreaterThanOrEqual(throttled.flatMap { Int($0.split(separator: " ")[2]) } ?? 0, 1,
                                    "\(String(describing: throttled))")
        await presenter.stop()
    }
}
