/// Why a session behind the web door is ending, as far as the door cares:
/// each reason has its WebSocket close code (PROTOCOL.md *WebSocket*).
public enum WebSessionEnd: Equatable, Sendable {
    /// Authentication failed (the third wrong token).
    case authFailed
    /// The token the session held was revoked.
    case tokenRevoked
    /// The daemon is shutting down.
    case shutdown
    /// Refused at accept: the daemon is full.
    case busy
    /// The transport failed (a write error, a bad TLS record).
    case transportError
    /// Any other end: the client quit, an HTTP exchange is over, a limit.
    case other

    /// The status code of the close frame the door sends for this end.
    public var webSocketCloseCode: UInt16 {
        switch self {
        case .authFailed, .tokenRevoked: return 1008
        case .shutdown: return 1001
        case .busy: return 1013
        case .transportError: return 1011
        case .other: return 1000
        }
    }
}
