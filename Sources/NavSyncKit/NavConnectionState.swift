/// Where a `SharedNavigation`'s connection to the daemon stands.
public enum NavConnectionState: Equatable, Sendable {
    /// `start()` has not been called.
    case idle
    /// `start()` is connecting and waiting for the first state.
    case connecting
    /// Watching the room: `stack`, `sheets` and `revision` follow it live.
    case connected
    /// The connection was lost after a successful start; the object keeps
    /// the last state it showed and retries with backoff until it is back.
    case reconnecting
    /// Stopped for good because something could not be trusted or fixed by
    /// retrying: a screen the type refuses, a daemon that refused the
    /// connection. The text says why.
    case failed(String)
    /// `stop()` was called.
    case stopped
}
