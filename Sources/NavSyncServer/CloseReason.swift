/// Why a connection ended; every disconnect is logged with one of these.
public enum CloseReason: Equatable, Sendable, CustomStringConvertible {
    /// The peer closed its side and had nothing left to wait for.
    case peerClosed
    /// A read or write failed (reset, broken pipe).
    case transportError(String)
    /// The client sent `QUIT`.
    case quit
    /// Refused at accept: `--max-clients` reached.
    case busy
    /// Too many wrong `AUTH` tokens.
    case authFailed
    /// The daemon is stopping.
    case shutdown
    /// A reload removed the token this connection authenticated with.
    case tokenRevoked
    /// The connection's signed token reached its `exp` (and the leeway).
    case tokenExpired
    /// An HTTP exchange or a WebSocket ended (the reason says how).
    case web(String)

    public var description: String {
        switch self {
        case .peerClosed: return "peer closed"
        case .transportError(let what): return "transport error: \(what)"
        case .quit: return "client quit"
        case .busy: return "over --max-clients"
        case .authFailed: return "too many failed AUTH attempts"
        case .shutdown: return "daemon shutting down"
        case .tokenRevoked: return "token revoked by a reload"
        case .tokenExpired: return "signed token expired"
        case .web(let how): return how
        }
    }
}
