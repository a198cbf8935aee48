// The signed-token verifier on arbitrary bytes, with OpenSSL's real HMAC and
// Ed25519 (TokenCrypto is compiled in). Two modes, chosen by the first byte:
//   - the bytes are a presented token (what a peer can send);
//   - the bytes are a header and a payload, split at a fuzzed point, which
//     the target signs with the HS256 key itself, so the claims parser sees
//     input that got past the signature.
// Properties:
//   - it never crashes;
//   - a token it accepts carries a grant the daemon can hold: a real role,
//     rooms and a name that follow the file's rules, an expiry that is a
//     finite time up to 2^53 and still holds now;
//   - a token it accepts is refused once a byte of its signature changes,
//     and by a verifier whose key has the same kid but another secret.
import NavSyncCore
import NavSyncTLS_TokenCrypto

private let now: Double = 1_800_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedToken(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    // Built per input rather than as globals: LeakSanitizer reports a
    // lazily made global's storage as leaked.
    let crypto = TokenCrypto()
    let secret = TokenKey(id: "k1", material: .hs256(secret: Array(repeating: 0x5A, count: 32)))
    // RFC 8032's first test key.
    let pair = TokenKey(id: "k2", material: .ed25519(publicKey: [
        0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
        0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a]))
    let verifier = SignedTokenVerifier(keys: [secret, pair], audience: nil, signatures: crypto)
    let otherSecret = SignedTokenVerifier(keys: [TokenKey(id: "k1", material: .hs256(secret: Array(repeating: 0x5B, count: 32)))],
                                          audience: nil, signatures: crypto)
    var input = FuzzInput(data, count)
    let mode = input.byte() % 2
    let token: [UInt8]
    if mode == 0 {
        token = input.rest()
    } else {
        let split = input.below(4096)
        let rest = input.rest()
        let cut = min(split, rest.count)
        let signingInput = Base64URL.encode(rest[..<cut]) + "." + Base64URL.encode(rest[cut...])
        guard let signature = crypto.sign(Array(signingInput.utf8), with: secret) else { violated("HMAC signs anything") }
        token = Array(SignedTokenClaims.compact(signingInput: signingInput, signature: signature).utf8)
    }
    let outcome = verifier.verify(token, now: now)
    guard case .valid(let grant) = outcome else { return 0 }
    require(grant.role == .view || grant.role == .control, "an accepted token has a real role", token.shown)
    if case .only(let names) = grant.rooms {
        require(!names.isEmpty && names.allSatisfy(Names.isValid), "rooms follow the room rule", token.shown)
    }
    require(Names.isValidMemberName(grant.name), "the name follows the NAME rule", token.shown)
    guard let lifetime = grant.lifetime else { violated("a signed grant has a lifetime", token.shown) }
    require(lifetime.expires.isFinite && lifetime.expires <= SignedTokenVerifier.latestTime, "exp is a real time", token.shown)
    require(!lifetime.hasEnded(at: now), "an accepted token holds now", token.shown)
    require(lifetime.keyID == "k1" || lifetime.keyID == "k2", "the kid is a key of the file", token.shown)
    _ = Wire.you(id: "1", grant: grant)

    var altered = token
    altered[altered.count - 2] = altered[altered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    if case .valid = verifier.verify(altered, now: now) { violated("a changed signature is refused", token.shown) }
    if lifetime.keyID == "k1", case .valid = otherSecret.verify(token, now: now) {
        violated("another secret under the same kid refuses the token", token.shown)
    }
    return 0
}
