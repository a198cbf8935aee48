import Glibc
import NavSyncCore
import NavSyncTLS

/// `navsync-bench tokens [--count N]`: what checking a signed token costs
/// the daemon — the whole `SignedTokenVerifier.verify` (split, base64url,
/// strict JSON of header and payload, the claims, and OpenSSL's HMAC-SHA256
/// or Ed25519) — as tokens per second of one core's CPU time. Every token is
/// checked to be accepted, so a broken key cannot make the number look good.
enum TokenBench {
    static let usage = "navsync-bench tokens [--count N]   signed tokens verified per core-second, HS256 and Ed25519"

    struct Row {
        var algorithm: String
        var count: Int
        var cpuSeconds: Double
        var perCoreSecond: Double { Double(count) / cpuSeconds }
    }

    static func run(count: Int) -> [Row] {
        let crypto = TokenCrypto()
        let secret = TokenKey(id: "shared", material: .hs256(secret: TokenCrypto.randomBytes(32) ?? []))
        let seed = TokenCrypto.randomBytes(32) ?? []
        let signing = TokenKey(id: "pair", material: .ed25519Private(seed: seed))
        let publicKey = TokenKey(id: "pair", material: .ed25519(publicKey: TokenCrypto.ed25519PublicKey(seed: seed) ?? []))
        let verifier = SignedTokenVerifier(keys: [secret, publicKey], audience: nil, signatures: crypto)
        let now = Double(time(nil))
        var rows: [Row] = []
        for key in [secret, signing] {
            let claims = SignedTokenClaims(role: .view, rooms: .only(["hall"]), name: "wall-1", audience: nil,
                                           issuedAt: UInt64(now), expires: UInt64(now) + 3600, tokenID: "bench")
            let input = claims.signingInput(for: key)
            let token = Array(SignedTokenClaims.compact(signingInput: input, signature: crypto.sign(Array(input.utf8), with: key) ?? []).utf8)
            let started = cpuSeconds()
            var accepted = 0
            for _ in 0..<count {
                if case .valid = verifier.verify(token, now: now) { accepted += 1 }
            }
            let spent = cpuSeconds() - started
            guard accepted == count else { die("tokens: \(key.jwtAlgorithm) tokens were refused") }
            rows.append(Row(algorithm: key.jwtAlgorithm, count: count, cpuSeconds: spent))
        }
        return rows
    }

    /// This process's CPU time (user and system), in seconds.
    static func cpuSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }
}
