import Foundation
import Glibc
import XCTest

/// The full-screen client with a signed token: its status line says until
/// when the token is valid; when the daemon ends it (`ERR forbidden token
/// expired`) it shows the line and stops retrying. Real tmux, bounded polls.
final class TUISignedTokenTests: XCTestCase {
    func test_tui_signedToken_statusShowsValidity_thenExpiryStopsIt() throws {
        _ = try TmuxServer.requireTmux()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let key = SignedTokenMinter.hs256("wall")
        let keys = try dir.write("keys", key.daemonLine + "\n")
        chmod(keys, 0o600)
        let daemon = try DaemonProcess(arguments: ["--token-keys", keys], state: "none")
        defer { daemon.stop() }

        // An hour's token: "token until HH:MM" in the pane's time zone (UTC here).
        let exp = Int(SignedTokenMinter.now) + 3600
        let long = try dir.write("long", key.token(payload: "{\"role\":\"view\",\"rooms\":\"*\",\"exp\":\(exp)}") + "\n")
        let until = String(format: "token until %02d:%02d", (exp % 86400) / 3600, (exp % 3600) / 60)
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port, extraArguments: "--token-file \(long)",
                                                             environment: "TZ=UTC"))
        tmux.waitFor(0, "a connected viewer showing until when its token is valid") {
            $0.statusLine.hasSuffix("connected") && $0.statusLine.contains(until)
        }
        tmux.kill()

        // A token ending in a few seconds: the daemon's line, and no retry.
        let soon = try dir.write("soon", key.endingSoon(in: 3) + "\n")
        let ending = try TmuxServer(command: clientPaneCommand(port: daemon.port, extraArguments: "--token-file \(soon)",
                                                               environment: "TZ=UTC"))
        defer { ending.kill() }
        ending.waitFor(0, timeout: 25, "the expiry shown, and stopped") {
            $0.contains("ERR forbidden token expired") && $0.statusLine.hasSuffix("stopped")
        }
        let connections = daemon.log.components(separatedBy: " connected (").count
        XCTAssertTrue(try daemon.connect().staysQuiet(for: 2))
        XCTAssertEqual(daemon.log.components(separatedBy: " connected (").count, connections + 1,
                       "the client connected again after its token expired:\n\(daemon.log)")
    }
}
