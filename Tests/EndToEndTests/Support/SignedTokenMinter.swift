import Foundation
import NavSyncCore
import NavSyncTLS

/// Keys and signed tokens for the end-to-end tests, with any claims (an
/// `exp` in the past, a wrong audience): the daemon must judge what it is
/// given, not only what `navsync token` would make.
struct SignedTokenMinter {
    let signing: TokenKey
    /// The line for the daemon's `--token-keys` file.
    let daemonLine: String

    static func hs256(_ kid: String, fill: UInt8 = 7) -> SignedTokenMinter {
        let key = TokenKey(id: kid, material: .hs256(secret: Array(repeating: fill, count: 32)))
        return SignedTokenMinter(signing: key, daemonLine: key.fileLine)
    }

    static func ed25519(_ kid: String) -> SignedTokenMinter {
        let seed = TokenCrypto.randomBytes(32)!
        let publicKey = TokenKey(id: kid, material: .ed25519(publicKey: TokenCrypto.ed25519PublicKey(seed: seed)!))
        return SignedTokenMinter(signing: TokenKey(id: kid, material: .ed25519Private(seed: seed)), daemonLine: publicKey.fileLine)
    }

    static var now: Double { Date().timeIntervalSince1970 }

    /// A token with exactly this payload and header.
    func token(payload: String, header: String? = nil) -> String {
        let head = header ?? "{\"alg\":\"\(signing.jwtAlgorithm)\",\"kid\":\"\(signing.id)\"}"
        let input = Base64URL.encode(Array(head.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return SignedTokenClaims.compact(signingInput: input, signature: TokenCrypto().sign(Array(input.utf8), with: signing)!)
    }

    /// `role`, `rooms` (`"*"` or a JSON array) and `exp` = now + `lifetime` seconds.
    func token(role: String = "control", rooms: String = "\"*\"", lifetime: Double = 3600, extra: String = "") -> String {
        token(payload: "{\"role\":\"\(role)\",\"rooms\":\(rooms),\"exp\":\(Self.now + lifetime)\(extra)}")
    }

    /// A token that holds for about `seconds` more: its `exp` is already
    /// past, within the 30 s leeway.
    func endingSoon(in seconds: Double = 3, role: String = "view") -> String {
        token(role: role, lifetime: seconds - SignedTokenVerifier.leewaySeconds)
    }
}
