/// What a `SharedNavigation` call throws.
public enum NavSyncError: Error, Equatable, Sendable {
    /// The daemon answered `ERR <code> <message>`: `conflict` for an `ifAt`
    /// that lost (the message holds `current=<rev>`), `at-root`, `no-next`,
    /// `no-sheet`, `unknown-screen`, `bad-args`, `limit`, `auth-failed`,
    /// `busy`, and so on. A reply the library could not read at all is
    /// reported with the code `bad-reply` and the line as the message.
    case server(code: String, message: String)
    /// No daemon answered `start()`, or the connection is down (the object
    /// is `.reconnecting`), or it went down before the reply came. A
    /// mutation that throws this may or may not have been applied: read
    /// `revision` and `stack` once `connection` is `.connected` again.
    case disconnected
    /// Called before `start()`, after `stop()` or while `.failed`.
    case notRunning
    /// The change cannot be written as one protocol line, so nothing was
    /// sent: data holding `\r` or `\n`, or a screen name outside the
    /// catalog's name rule. The text says which.
    case invalidData(String)
    /// A route from the daemon holds this screen (or this screen's data),
    /// and `Screen.init?(screen:data:)` refused it.
    case unknownScreen(String)
}
