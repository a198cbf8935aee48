import NavSyncCore

/// What one connection may do, and what it showed to get there: its grant
/// (the anonymous role until a good `AUTH`), the token that gave it, and
/// its failed `AUTH`s. The grant is one value, replaced whole.
struct SessionAccess {
    /// What this connection may do: the anonymous role until a good `AUTH`,
    /// then its grant (replaced by a later `AUTH` or a reload).
    private(set) var grant: Grant
    /// The token of the last good `AUTH`, kept to find this connection's
    /// grant again after a reload. Never logged.
    private(set) var credential: String?
    /// Failed `AUTH`s on this connection.
    private(set) var failures = 0

    init(grant: Grant) { self.grant = grant }

    /// A good `AUTH`: `token` gave `grant`.
    mutating func authenticated(with token: String, as grant: Grant) {
        credential = token
        self.grant = grant
    }

    /// An HTTP request acts with its own credential (nil: none presented,
    /// the anonymous role's grant): the connection takes both as they are.
    mutating func actsFor(_ grant: Grant, token: String?) {
        credential = token
        self.grant = grant
    }

    /// A reload gave its token another grant.
    mutating func regranted(_ grant: Grant) { self.grant = grant }

    /// One more failed `AUTH`; returns how many there have been.
    mutating func authFailed() -> Int {
        failures += 1
        return failures
    }
}
