/// The codes that follow `ERR` on the wire. The raw values are the contract.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The verb is not one the protocol knows.
    case unknownCommand = "unknown-command"
    /// Wrong number or form of arguments, or data that breaks a screen's data rule.
    case badArgs = "bad-args"
    /// A screen name that is not in the catalog.
    case unknownScreen = "unknown-screen"
    /// A route that cannot be read: missing slash, empty, malformed escape.
    case badRoute = "bad-route"
    /// `POP` on a stack of one entry.
    case atRoot = "at-root"
    /// `NEXT` on a screen without a `next`.
    case noNext = "no-next"
    /// `IF <rev>` did not match the room's revision.
    case conflict = "conflict"
    /// The line passed the maximum length.
    case lineTooLong = "line-too-long"
    /// The line is not valid UTF-8.
    case badEncoding = "bad-encoding"
    /// A token is configured and this connection has not authenticated.
    case authRequired = "auth-required"
    /// `AUTH` with the wrong token.
    case authFailed = "auth-failed"
    /// A configured resource bound would be passed.
    case limit = "limit"
    /// `DISMISS` with no sheet presented.
    case noSheet = "no-sheet"
    /// Too many connections; the daemon closes this one.
    case busy = "busy"
    /// The connection's grant does not allow the line (its role or its
    /// rooms); also sent, unasked, for a revoked token or room.
    case forbidden = "forbidden"
    /// The store holding the rooms (the backplane's Redis) cannot be reached; nothing changed.
    case unavailable = "unavailable"
    /// The state file could not be written; nothing changed.
    case `internal` = "internal"
}

/// A refusal sent to the client as `ERR <code> <message>`.
public struct ProtocolError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
