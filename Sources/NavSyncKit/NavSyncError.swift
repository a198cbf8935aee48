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

extension NavSyncError: CustomStringConvertible {
    /// One line a person can act on, for logs and `print(error)`: the
    /// daemon's own words for a refusal, and what the state of the
    /// connection means for the call that failed.
    public var description: String {
        switch self {
        case .server(let code, let message):
            return message.isEmpty ? "the daemon refused: \(code)" : "the daemon refused (\(code)): \(message)"
        case .disconnected:
            return "not connected to the daemon (unreachable, or the connection was lost); "
                + "a change sent just before may or may not have been applied"
        case .notRunning:
            return "the shared navigation is not running (start() was not called, it failed, or stop() was)"
        case .invalidData(let why):
            return "nothing was sent: \(why)"
        case .unknownScreen(let screen):
            return "the room shows \(screen), which this app's screen type does not know; "
                + "start the daemon with the catalog this app was written for"
        }
    }
}
