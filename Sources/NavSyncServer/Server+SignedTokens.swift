import NavSyncCore

/// The hub's side of signed tokens (PROTOCOL.md *Signed tokens*): a reload
/// of `--token-keys`, and the end of grants whose token expired. The grant
/// carries its own lifetime (`Grant.lifetime`), so a second `AUTH` that
/// renews it needs nothing here.
extension Server {
    /// New keys (or the first ones): every connection whose signed token no
    /// longer verifies — its `kid` gone, or naming another key now — is told
    /// `forbidden token revoked` and closed.
    /// - Returns: how many connections were closed.
    @discardableResult
    public func reload(signedTokens verifier: SignedTokenVerifier?, wallClock: @escaping () -> Double) -> Int {
        access.useSignedTokens(verifier, wallClock: wallClock)
        var revoked = 0
        for session in sessions.values where !session.isClosing && session.grant.lifetime != nil {
            guard let token = session.access.credential, !access.stillSigned(token) else { continue }
            revoked += 1
            fanOut.reply(session, Wire.error(ProtocolError(.forbidden, "token revoked")))
            fanOut.end(session, .tokenRevoked)
        }
        return revoked
    }

    /// Ends every connection whose signed grant has run out (its `exp` plus
    /// the leeway): `ERR forbidden token expired`, then closed; a WebSocket
    /// closes with 1008, as for a revoked token. The daemon calls this from
    /// a loop timer.
    /// - Returns: how many connections were closed.
    @discardableResult
    public func endExpiredGrants() -> Int {
        let now = access.wallClock()
        var ended = 0
        for session in sessions.values where !session.isClosing {
            guard let lifetime = session.grant.lifetime, lifetime.hasEnded(at: now) else { continue }
            ended += 1
            fanOut.reply(session, Wire.error(ProtocolError(.forbidden, "token expired")))
            fanOut.end(session, .tokenExpired)
        }
        return ended
    }

    /// How many open connections hold a grant from a signed token.
    public var signedGrantCount: Int {
        sessions.values.reduce(0) { $0 + ($1.grant.lifetime != nil && !$1.isClosing ? 1 : 0) }
    }
}
