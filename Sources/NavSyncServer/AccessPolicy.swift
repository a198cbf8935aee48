import NavSyncCore

/// Who may do what, for every door: the grants table (token → grant),
/// what a connection holds before `AUTH` (`--anonymous`), and the record of
/// failed credentials (the `auth_failures` figure and its rate-limited
/// `warn` line). Every presented token is judged here (`check`), with
/// the guessing throttle in front of it, so every door throttles alike. The per-line judgement itself is the grant's
/// (`Grant.refusal`, from the `Verb` table's access column); this type says
/// which grant a connection holds.
///
/// Tokens live only here and in the sessions that presented them; no log
/// line or reply ever carries one.
/// Must be used on the loop thread only.
public final class AccessPolicy {
    /// Grants by the hash of their token. A hash is seeded per process, so
    /// the bucket tells an attacker nothing; the token itself is compared in
    /// constant time (no `==` on the secret).
    private var buckets: [Int: [GrantsFile.Entry]] = [:]
    /// How many grants the table holds.
    public private(set) var grantCount = 0
    /// True when a token file is configured: `AUTH` is then a real question.
    public let hasTokens: Bool
    /// What a connection may do before `AUTH`, in every room.
    public let anonymous: Grant
    /// Failed `AUTH` lines and Bearer headers since the daemon started.
    public private(set) var failures: UInt64 = 0
    /// Those of them answered `throttled`, unchecked (`auth_throttled`).
    public private(set) var throttledCount: UInt64 = 0
    /// Guesses by address (PROTOCOL.md *Guessing*).
    private var throttle = GuessThrottle()
    /// The throttle's clock: the loop's milliseconds in the daemon.
    private let milliseconds: () -> UInt64
    private var failuresSinceLastLine: UInt64 = 0
    private var lastLoggedSecond: UInt64?
    private let log: Logger
    private let seconds: () -> UInt64
    /// `--token-keys` (and `--token-audience`): nil when signed tokens are off.
    public private(set) var signedTokens: SignedTokenVerifier?
    /// Seconds since 1970, for `exp` and `nbf` (the daemon's wall clock).
    public private(set) var wallClock: () -> Double = { 0 }

    /// - Parameters:
    ///   - grants: every grant.
    ///   - tokensConfigured: a token file was given (even one with no grant).
    ///   - anonymous: the role before `AUTH`; nil takes the default
    ///     (`control` without tokens, `none` with them).
    ///   - seconds: a clock for the one-warning-a-second rule.
    ///   - milliseconds: the guessing throttle's clock.
    public init(grants: [GrantsFile.Entry], tokensConfigured: Bool, anonymous: Role?, log: Logger,
                seconds: @escaping () -> UInt64, milliseconds: @escaping () -> UInt64) {
        hasTokens = tokensConfigured
        self.anonymous = .anonymous(anonymous ?? (tokensConfigured ? .none : .control))
        self.log = log
        self.seconds = seconds
        self.milliseconds = milliseconds
        replaceGrants(grants)
    }

    /// What a token presented on any door (`AUTH`, a Bearer header, a
    /// WebSocket's `AUTH`) comes to, from a peer at `address`. A throttled
    /// address's token is not looked at. A token that does not verify is a
    /// guess and counts towards its address's throttle.
    ///
    /// The caller counts the failure (`noteFailure`) with its own wording.
    public func check(token: String, from address: PeerAddress) -> TokenCheck {
        let now = milliseconds()
        if let wait = throttle.retryAfterSeconds(for: address, now: now) {
            return .throttled(retryAfterSeconds: wait)
        }
        if let grant = grant(forToken: token) { return .granted(grant) }
        // A signed token whose signature verifies but whose `exp`, `nbf` or
        // `aud` does not hold is refused and is no guess, so expired links
        // cannot lock out their address.
        if let signedTokens {
            switch signedTokens.verify(token, now: wallClock()) {
            case .valid(let grant): return .granted(grant)
            case .notHolding(let refusal): return .refused(refusal.text)
            case .invalid: break
            }
        }
        throttle.noteGuess(from: address, now: now)
        return .guess
    }

    /// The grant a token unlocks, nil for a wrong one.
    public func grant(forToken token: String) -> Grant? {
        let presented = Array(token.utf8)
        var found: Grant?
        // Every candidate in the bucket is compared in full.
        for entry in buckets[token.hashValue] ?? [] where Self.constantTimeEqual(presented, Array(entry.token.utf8)) {
            found = entry.grant
        }
        return found
    }

    /// Turns signed tokens on (or replaces their keys after a reload, or
    /// turns them off with nil); the caller revokes what no longer verifies.
    public func useSignedTokens(_ verifier: SignedTokenVerifier?, wallClock: @escaping () -> Double) {
        signedTokens = verifier
        self.wallClock = wallClock
    }

    /// Whether a connection's signed token still verifies under the keys
    /// held now (its `kid` kept and naming the same key), whatever the time.
    public func stillSigned(_ token: String) -> Bool {
        signedTokens?.stillSigned(token) ?? false
    }

    /// A reload's new table; the caller applies it to open connections.
    public func replaceGrants(_ grants: [GrantsFile.Entry]) {
        var table: [Int: [GrantsFile.Entry]] = [:]
        table.reserveCapacity(grants.count)
        for entry in grants { table[entry.token.hashValue, default: []].append(entry) }
        buckets = table
        grantCount = grants.count
    }

    /// Counts one failed credential and logs it at `warn` with the peer's
    /// address, at most one line a second for the whole daemon (the line
    /// says how many failures it stands for). Never the token.
    /// `throttled`: the token was not checked (`auth_throttled` too).
    public func noteFailure(_ what: String, peer: String, throttled: Bool = false) {
        failures += 1
        if throttled { throttledCount += 1 }
        failuresSinceLastLine += 1
        let now = seconds()
        guard lastLoggedSecond != now else { return }
        lastLoggedSecond = now
        let count = failuresSinceLastLine
        failuresSinceLastLine = 0
        log.warn("auth failure: \(what) from \(peer)" + (count > 1 ? " (\(count) failures since the last such line)" : ""))
    }

    /// Compares without an early exit, so timing does not reveal how much of
    /// a guessed token was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}

/// The outcome of one presented token (`AccessPolicy.check`).
public enum TokenCheck: Equatable, Sendable {
    /// A grant's token: the grant it unlocks.
    case granted(Grant)
    /// A token that does not verify: counted towards its address's throttle.
    case guess
    /// A token that verified but does not hold now (a signed token expired,
    /// not yet valid, or for another audience): a failure, but no guess.
    /// The text follows `auth-failed` (`token expired`).
    case refused(String)
    /// Its address is throttled: the token was not checked.
    case throttled(retryAfterSeconds: Int)
}
