import NavSyncCore

/// `AUTH` and the reload of grants: what changes a session's access
/// (`SessionAccess`), and what follows from it (a room no longer covered,
/// a revoked token, the member line of a changed grant).
extension Server {
    /// A good token replaces whatever the connection held (the
    /// anonymous role or an earlier grant); a wrong one leaves it as it was
    /// and counts towards the third, which closes the connection. So
    /// does an `AUTH` from a throttled address, answered without a look at
    /// its token.
    func authenticate(_ session: Session, _ token: String) {
        guard access.hasTokens else {
            fanOut.reply(session, Wire.error(ProtocolError(.badArgs, "this daemon has no token; AUTH is not needed")))
            return
        }
        let grant: Grant
        switch access.check(token: token, from: session.connection.peerAddress) {
        case .granted(let granted):
            grant = granted
        case .guess:
            refuseAuth(session, "wrong token", logged: "wrong token on AUTH")
            return
        case .refused(let why):
            refuseAuth(session, why, logged: "\(why) on AUTH")
            return
        case .throttled(let seconds):
            refuseAuth(session, "throttled, retry in \(seconds) s", logged: "AUTH throttled", throttled: true)
            return
        }
        session.access.authenticated(with: token, as: grant)
        fanOut.reply(session, Wire.ok(revisionShown(to: session)))
        leaveRoomIfNoLongerGranted(session)
        grantChanged(session)
    }

    /// One failed `AUTH`: counted, logged (rate-limited), answered; the
    /// third on a connection closes it.
    private func refuseAuth(_ session: Session, _ reason: String, logged: String, throttled: Bool = false) {
        let failures = session.access.authFailed()
        access.noteFailure("\(logged) (\(failures) of \(Limits.authAttemptsBeforeClose))",
                           peer: session.label, throttled: throttled)
        fanOut.reply(session, Wire.error(ProtocolError(.authFailed, reason)))
        if failures >= Limits.authAttemptsBeforeClose {
            fanOut.end(session, .authFailed)
        }
    }

    /// The revision an `OK <rev>` carries: the room's, or 0 for a room
    /// outside the connection's grant, so nothing about it is told.
    func revisionShown(to session: Session) -> UInt64 {
        session.grant.covers(session.room) ? state(of: session.room).revision : 0
    }

    /// After the grant changed: a connection watching a room its grant no
    /// longer covers stops watching and is told once, unasked (after any
    /// reply already queued). It stays open and may `JOIN` a granted room.
    func leaveRoomIfNoLongerGranted(_ session: Session) {
        guard session.watching, !session.grant.covers(session.room) else { return }
        stopWatching(session)
        fanOut.reply(session, Wire.error(ProtocolError(.forbidden, "room revoked")))
    }

    /// A reload of the grants: a connection whose token is gone is told
    /// `forbidden token revoked` and closed; one whose grant changed holds
    /// the new one at once. Connections that never authenticated keep the
    /// anonymous role, which a reload does not change.
    /// - Returns: how many connections were closed and how many changed grant.
    @discardableResult
    public func reload(grants: [GrantsFile.Entry]) -> (revoked: Int, changed: Int) {
        access.replaceGrants(grants)
        var revoked = 0, changed = 0
        for session in sessions.values where !session.isClosing {
            // A signed token's grant is in no file: its keys' reload judges it.
            guard let token = session.access.credential, session.grant.lifetime == nil else { continue }
            guard let grant = access.grant(forToken: token) else {
                revoked += 1
                fanOut.reply(session, Wire.error(ProtocolError(.forbidden, "token revoked")))
                fanOut.end(session, .tokenRevoked)
                continue
            }
            guard grant != session.grant else { continue }
            changed += 1
            session.access.regranted(grant)
            leaveRoomIfNoLongerGranted(session)
            grantChanged(session)
        }
        return (revoked, changed)
    }
}
