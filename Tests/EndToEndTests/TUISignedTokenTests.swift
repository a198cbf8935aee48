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
        // The client adds the date when the end is not today by its own clock,
        // so from 23:00 UTC on the hour's token ends tomorrow: the words are
        // worked out from the client's possible clocks (a wait may span
        // across midnight itself: the day it started on, or today).
        let started = Int(SignedTokenMinter.now)
        let tmux = try TmuxServer(command: clientPaneCommand(port: daemon.port, extraArguments: "--token-file \(long)",
                                                             environment: "TZ=UTC"))
        tmux.waitFor(0, "a connected viewer showing until when its token is valid") { screen in
            let now = Int(SignedTokenMinter.now)
            let until = [Self.validityWords(exp, now: started), Self.validityWords(exp, now: now)]
            return screen.statusLine.hasSuffix("connected") && until.contains { screen.statusLine.contains($0) }
        }
        tmux.kill()

        // A token ending in a few seconds: the daemon's line, and no retry.
        // Its seconds count from now, and tmux and the client must start and
        // authenticate within them (else the daemon refuses the AUTH with
        // auth-failed, not the forbidden line this test is about): ten, not three.
        let soon = try dir.write("soon", key.endingSoon(in: 10) + "\n")
        let ending = try TmuxServer(command: clientPaneCommand(port: daemon.port, extraArguments: "--token-file \(soon)",
                                                               environment: "TZ=UTC"))
        defer { ending.kill() }
        ending.waitFor(0, timeout: 40, "the expiry shown, and stopped") {
            $0.contains("ERR forbidden token expired") && $0.statusLine.hasSuffix("stopped")
        }
        let connections = daemon.log.components(separatedBy: " connected (").count
        // The test's own connection is logged on the daemon's schedule: wait
        // for that line, then a quiet while in which no retry may arrive.
        let probe = try daemon.connect()
        XCTAssertTrue(waitUntil { daemon.log.components(separatedBy: " connected (").count >= connections + 1 },
                      "the probe's connection was never logged:\n\(daemon.log)")
        XCTAssertTrue(probe.staysQuiet(for: 2))
        XCTAssertEqual(daemon.log.components(separatedBy: " connected (").count, connections + 1,
                       "the client connected again after its token expired:\n\(daemon.log)")
    }

    /// The status line's words for a token ending at `exp` (UTC, as the pane's
    /// TZ): `token until HH:MM`, with the date in front when `exp` is not on
    /// the day of `now` (Clients/navsync/TUI/TokenValidity.swift).
    static func validityWords(_ exp: Int, now: Int) -> String {
        var end = time_t(exp), today = time_t(now)
        var parts = tm(), todayParts = tm()
        gmtime_r(&end, &parts)
        gmtime_r(&today, &todayParts)
        let clock = String(format: "%02d:%02d", parts.tm_hour, parts.tm_min)
        guard parts.tm_year != todayParts.tm_year || parts.tm_yday != todayParts.tm_yday else { return "token until " + clock }
        return String(format: "token until %04d-%02d-%02d ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday) + clock
    }
}
