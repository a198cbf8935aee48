import ChildProcessHarness
import Foundation
import Glibc
import NavSyncCore
import NavSyncKit
import XCTest

/// Signed tokens from the clients' side: `watch` and one-shots end with
/// exit 1 and the daemon's line when the token is refused or expires, and
/// NavSyncKit's `tokenExpiry`, `renew(token:)` and `.failed` on expiry.
@MainActor
final class SignedTokenClientTests: XCTestCase {
    private let key = SignedTokenMinter.hs256("wall")

    private func daemon(_ dir: TemporaryDirectory) throws -> DaemonProcess {
        let keys = try dir.write("keys", key.daemonLine + "\n")
        chmod(keys, 0o600)
        return try DaemonProcess(arguments: ["--token-keys", keys], state: "none")
    }

    func test_watchAndOneShots_endWithExit1_onARefusedOrExpiredToken() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try daemon(dir)
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        let expired = try dir.write("expired", key.token(lifetime: -31) + "\n")
        let get = try runProcess(Binaries.client, ["--connect", address, "--token-file", expired, "get"])
        XCTAssertEqual(get.status, 1)
        XCTAssertTrue(get.stderr.contains("ERR auth-failed token expired"), get.stderr)
        XCTAssertEqual(get.stdout, "")

        // Its seconds count from now, and the client process must start and
        // authenticate within them (a late AUTH is refused as auth-failed and
        // prints no state): eight, not two.
        let soon = try dir.write("soon", key.endingSoon(in: 8) + "\n")
        let watch = try runProcess(Binaries.client, ["--connect", address, "--token-file", soon, "watch"], timeout: 30)
        XCTAssertEqual(watch.status, 1, watch.stderr)
        XCTAssertEqual(watch.stdout, "0 state /red\n")
        XCTAssertTrue(watch.stderr.contains("ERR forbidden token expired"), watch.stderr)
        XCTAssertFalse(watch.stderr.contains("retrying"), "an expired token is not retried: \(watch.stderr)")
    }

    func test_library_tokenExpiry_renewKeepsItPastTheFirstEnd_thenExpiryFails() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try daemon(dir)
        defer { daemon.stop() }
        let address = "127.0.0.1:\(daemon.port)"
        // The first token holds for 8 s: start() and both renewals must reach
        // the daemon within them on a loaded machine; the renewed one for 16 s,
        // so that the check just past the first end comes well before it.
        let firstExpiry = Int(SignedTokenMinter.now) - 22
        let screen = SharedNavigation<NavEntry>(
            connect: address, token: key.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(firstExpiry)}"))
        XCTAssertNil(screen.tokenExpiry)
        try await screen.start()
        XCTAssertEqual(screen.tokenExpiry, Date(timeIntervalSince1970: TimeInterval(firstExpiry)))

        // A refused renewal throws and keeps the grant.
        do {
            try await screen.renew(token: key.token(lifetime: -60))
            XCTFail("an expired renewal was accepted")
        } catch NavSyncError.server(let code, let message) {
            XCTAssertEqual(code, "auth-failed")
            XCTAssertEqual(message, "token expired")
        }
        let renewedExpiry = Int(SignedTokenMinter.now) - 14
        try await screen.renew(token: key.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(renewedExpiry)}"))
        await eventually("the new expiry is shown") {
            screen.tokenExpiry == Date(timeIntervalSince1970: TimeInterval(renewedExpiry))
        }
        // Past the first token's end (plus the leeway) the object is still connected...
        let firstEnd = Double(firstExpiry) + SignedTokenVerifier.leewaySeconds + 1.2
        while SignedTokenMinter.now < firstEnd { try await Task.sleep(nanoseconds: 100_000_000) }
        XCTAssertEqual(screen.connection, .connected)
        // ...until the renewed one ends too: then it fails and does not retry.
        await eventually("the object failed on expiry", seconds: 30) {
            if case .failed(let reason) = screen.connection { return reason.contains("forbidden token expired") }
            return false
        }
        await screen.stop()
    }
}
