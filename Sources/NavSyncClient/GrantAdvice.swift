import NavSyncCore

/// What a command-line client says, in one line, after the daemon refused
/// a line with `forbidden`: for a room outside the grant, that room and the
/// rooms the grant allows (from `WHOAMI`) with the `--room` that would
/// work (COMMANDS.md); for anything else forbidden, that the grant does not
/// allow it. The daemon's own `ERR` line is printed before it, unchanged.
public enum GrantAdvice {
    /// - Parameters:
    ///   - room: the room the client asked for.
    ///   - identity: the connection's last `WHOAMI`, nil when it was not
    ///     asked or the daemon has none (before 1.2).
    public static func forbidden(_ error: ServerError, room: String, identity: Identity?) -> String {
        guard error.message.contains("outside") else {
            return "this token's grant does not allow that (a view grant may not change a room)"
        }
        let refused = "room \(room) is outside this token's grant"
        let allowed = (identity?.rooms ?? "-").split(separator: ",").map(String.init).filter { $0 != "-" && $0 != "*" }
        guard let first = allowed.first else {
            return refused + "; ask for a token that includes it, or pass --room with one of the token's rooms"
        }
        return refused + ", which allows " + allowed.joined(separator: ", ") + "; try --room \(first)"
    }
}
