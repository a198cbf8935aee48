import NavSyncCore
import NavSyncTLS
import XCTest

/// The signed-token verifier with OpenSSL's real HMAC and Ed25519: good
/// tokens of both kinds, and a table of tokens that must be refused, each
/// for its own reason.
final class SignedTokenVerifierTests: XCTestCase {
    private let crypto = TokenCrypto()
    private let now: Double = 1_800_000_000
    private let secret = TokenKey(id: "shared", material: .hs256(secret: Array(repeating: 7, count: 32)))
    private let seed = TokenKey(id: "pair", material: .ed25519Private(seed: Array(0..<32)))
    private var publicKey: TokenKey {
        TokenKey(id: "pair", material: .ed25519(publicKey: TokenCrypto.ed25519PublicKey(seed: Array(0..<32))!))
    }

    private func verifier(audience: String? = nil) -> SignedTokenVerifier {
        SignedTokenVerifier(keys: [secret, publicKey], audience: audience, signatures: crypto)
    }

    /// A token with exactly this header and payload text, signed by `key`.
    private func mint(header: String, payload: String, key: TokenKey) -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return SignedTokenClaims.compact(signingInput: input, signature: crypto.sign(Array(input.utf8), with: key)!)
    }

    private func hs(_ payload: String, header: String? = nil) -> String {
        mint(header: header ?? #"{"alg":"HS256","typ":"JWT","kid":"shared"}"#, payload: payload, key: secret)
    }

    private let goodClaims = #"{"role":"view","rooms":["hall","lobby"],"exp":1800000600,"name":"wall-1"}"#

    func test_verify_hs256AndEd25519_giveTheGrantWithItsExpiry() {
        let expected = Grant(role: .view, rooms: .only(["hall", "lobby"]), name: "wall-1",
                             lifetime: TokenLifetime(expires: 1_800_000_600, keyID: "shared"))
        XCTAssertEqual(verifier().verify(hs(goodClaims), now: now), .valid(expected))
        let ed = mint(header: #"{"alg":"EdDSA","kid":"pair"}"#, payload: goodClaims, key: seed)
        var edGrant = expected
        edGrant.lifetime?.keyID = "pair"
        XCTAssertEqual(verifier().verify(ed, now: now), .valid(edGrant))
    }

    func test_verify_mintedClaims_roundTrip() {
        let claims = SignedTokenClaims(role: .control, rooms: .every, name: nil, audience: "wall", issuedAt: 1_800_000_000,
                                       expires: 1_800_003_600, tokenID: "abc")
        let input = claims.signingInput(for: seed)
        let token = SignedTokenClaims.compact(signingInput: input, signature: crypto.sign(Array(input.utf8), with: seed)!)
        XCTAssertEqual(verifier(audience: "wall").verify(token, now: now),
                       .valid(Grant(role: .control, rooms: .every, name: "control",
                                    lifetime: TokenLifetime(expires: 1_800_003_600, keyID: "pair"))))
    }

    func test_verify_timesAndAudience_areRefusalsNotGuesses() {
        XCTAssertEqual(verifier().verify(hs(#"{"role":"view","rooms":"*","exp":1799999970}"#), now: now), .notHolding(.expired),
                       "exp plus the 30 s leeway is over")
        XCTAssertEqual(verifier().verify(hs(#"{"role":"view","rooms":"*","exp":1799999971}"#), now: now).isValid, true,
                       "within the leeway")
        XCTAssertEqual(verifier().verify(hs(#"{"role":"view","rooms":"*","exp":1800000100.5,"nbf":1800000031}"#), now: now),
                       .notHolding(.notYetValid))
        XCTAssertTrue(verifier().verify(hs(#"{"role":"view","rooms":"*","exp":1800000100,"nbf":1800000030}"#), now: now).isValid)
        XCTAssertEqual(verifier(audience: "wall").verify(hs(#"{"role":"view","rooms":"*","exp":1800000100}"#), now: now),
                       .notHolding(.wrongAudience), "an audience is required when the daemon names one")
        XCTAssertEqual(verifier(audience: "wall").verify(hs(#"{"role":"view","rooms":"*","exp":1800000100,"aud":"other"}"#), now: now),
                       .notHolding(.wrongAudience))
        XCTAssertTrue(verifier(audience: "wall").verify(hs(#"{"role":"view","rooms":"*","exp":1800000100,"aud":["x","wall"]}"#),
                                                        now: now).isValid)
        XCTAssertTrue(verifier().verify(hs(#"{"role":"view","rooms":"*","exp":1800000100,"aud":"any"}"#), now: now).isValid,
                      "without --token-audience an aud is not checked")
    }

    func test_verify_malformedTable_eachRefusedForItsReason() {
        let claims = goodClaims
        let good = hs(claims)
        let parts = good.split(separator: ".").map(String.init)
        let unsignedNone = Base64URL.encode(Array(#"{"alg":"none","kid":"shared"}"#.utf8)) + "." + parts[1] + "."
        // HS256 "signed" with the Ed25519 public key's bytes as the secret: the classic confusion.
        let publicBytes: [UInt8] = { if case .ed25519(let k) = publicKey.material { return k }; return [] }()
        let confusion = mint(header: #"{"alg":"HS256","kid":"pair"}"#, payload: claims,
                             key: TokenKey(id: "pair", material: .hs256(secret: publicBytes)))
        let table: [(String, String, SignedTokenFault)] = [
            ("empty", "", .notThreeParts),
            ("two parts", parts[0] + "." + parts[1], .notThreeParts),
            ("four parts", good + ".x", .notThreeParts),
            ("padding", parts[0] + "=." + parts[1] + "." + parts[2], .notBase64URL),
            ("standard alphabet", parts[0] + "+." + parts[1] + "." + parts[2], .notBase64URL),
            ("blank inside", parts[0] + " ." + parts[1] + "." + parts[2], .notBase64URL),
            ("a huge part", String(repeating: "A", count: 8193) + "." + parts[1] + "." + parts[2], .partTooLong),
            ("header not JSON", Base64URL.encode(Array("alg".utf8)) + "." + parts[1] + "." + parts[2], .headerNotJSONObject),
            ("header an array", Base64URL.encode(Array("[1]".utf8)) + "." + parts[1] + "." + parts[2], .headerNotJSONObject),
            ("alg none, no signature", unsignedNone, .algorithm),
            ("alg none, signed", hs(claims, header: #"{"alg":"none","kid":"shared"}"#), .algorithm),
            ("alg missing", hs(claims, header: #"{"kid":"shared"}"#), .algorithm),
            ("alg lower case", hs(claims, header: #"{"alg":"hs256","kid":"shared"}"#), .algorithm),
            ("alg HS512", hs(claims, header: #"{"alg":"HS512","kid":"shared"}"#), .algorithm),
            ("EdDSA header on an hs256 key", hs(claims, header: #"{"alg":"EdDSA","kid":"shared"}"#), .algorithm),
            ("HS256 signed with the public key", confusion, .algorithm),
            ("kid missing", hs(claims, header: #"{"alg":"HS256"}"#), .unknownKey),
            ("kid unknown", hs(claims, header: #"{"alg":"HS256","kid":"other"}"#), .unknownKey),
            ("kid a path", hs(claims, header: #"{"alg":"HS256","kid":"../../etc/passwd"}"#), .unknownKey),
            ("kid a number", hs(claims, header: #"{"alg":"HS256","kid":1}"#), .unknownKey),
            ("crit", hs(claims, header: #"{"alg":"HS256","kid":"shared","crit":["exp"]}"#), .criticalExtension),
            ("typ a number", hs(claims, header: #"{"alg":"HS256","kid":"shared","typ":1}"#), .headerMember),
            ("duplicate alg", hs(claims, header: #"{"alg":"HS256","kid":"shared","alg":"none"}"#), .headerNotJSONObject),
            ("signature of another payload", parts[0] + "." + Base64URL.encode(Array(#"{"role":"control","rooms":"*","exp":1900000000}"#.utf8)) + "." + parts[2], .signature),
            ("signature cut short", parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(3)), .signature),
            ("signature empty", parts[0] + "." + parts[1] + ".", .signature),
            ("payload not JSON", hs("role=view"), .payloadNotJSONObject),
            ("payload trailing comma", hs(#"{"role":"view","rooms":"*","exp":1800000100,}"#), .payloadNotJSONObject),
            ("duplicate role", hs(#"{"role":"view","rooms":"*","exp":1800000100,"role":"control"}"#), .payloadNotJSONObject),
            ("role missing", hs(#"{"rooms":"*","exp":1800000100}"#), .claim("role")),
            ("role none", hs(#"{"role":"none","rooms":"*","exp":1800000100}"#), .claim("role")),
            ("rooms missing", hs(#"{"role":"view","exp":1800000100}"#), .claim("rooms")),
            ("rooms empty", hs(#"{"role":"view","rooms":[],"exp":1800000100}"#), .claim("rooms")),
            ("rooms a bad name", hs(#"{"role":"view","rooms":["bad!"],"exp":1800000100}"#), .claim("rooms")),
            ("rooms a comma string", hs(#"{"role":"view","rooms":"a,b","exp":1800000100}"#), .claim("rooms")),
            ("exp missing", hs(#"{"role":"view","rooms":"*"}"#), .claim("exp")),
            ("exp a string", hs(#"{"role":"view","rooms":"*","exp":"1800000100"}"#), .claim("exp")),
            ("exp beyond 2^53", hs(#"{"role":"view","rooms":"*","exp":9007199254740993000}"#), .claim("exp")),
            ("exp beyond a double", hs(#"{"role":"view","rooms":"*","exp":1e400}"#), .claim("exp")),
            ("exp negative", hs(#"{"role":"view","rooms":"*","exp":-1}"#), .claim("exp")),
            ("nbf a string", hs(#"{"role":"view","rooms":"*","exp":1800000100,"nbf":"0"}"#), .claim("nbf")),
            ("iat null", hs(#"{"role":"view","rooms":"*","exp":1800000100,"iat":null}"#), .claim("iat")),
            ("name not a NAME", hs(#"{"role":"view","rooms":"*","exp":1800000100,"name":"two words"}"#), .claim("name")),
            ("jti a number", hs(#"{"role":"view","rooms":"*","exp":1800000100,"jti":5}"#), .claim("jti")),
            ("aud a number", hs(#"{"role":"view","rooms":"*","exp":1800000100,"aud":5}"#), .claim("aud")),
            ("aud array of numbers", hs(#"{"role":"view","rooms":"*","exp":1800000100,"aud":[5]}"#), .claim("aud")),
        ]
        for (what, token, fault) in table {
            XCTAssertEqual(verifier().verify(token, now: now), .invalid(fault), what)
        }
    }

    func test_verify_afterTheKeyChanges_isNoLongerSigned() {
        let token = hs(goodClaims)
        XCTAssertTrue(verifier().stillSigned(token))
        let changed = SignedTokenVerifier(keys: [TokenKey(id: "shared", material: .hs256(secret: Array(repeating: 8, count: 32)))],
                                          audience: nil, signatures: crypto)
        XCTAssertFalse(changed.stillSigned(token))
        XCTAssertFalse(SignedTokenVerifier(keys: [publicKey], audience: nil, signatures: crypto).stillSigned(token))
        XCTAssertTrue(verifier().stillSigned(hs(#"{"role":"view","rooms":"*","exp":1}"#)), "an expired token is still signed")
    }

    func test_tokenCrypto_ed25519KnownAnswer_rfc8032Test1() {
        // RFC 8032 §7.1 TEST 1: the empty message.
        let seedBytes = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
        XCTAssertEqual(TokenCrypto.ed25519PublicKey(seed: seedBytes),
                       hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        let signature = crypto.sign([], with: TokenKey(id: "k", material: .ed25519Private(seed: seedBytes)))
        XCTAssertEqual(signature, hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                                      + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"))
    }

    func test_tokenCrypto_hmacKnownAnswer_rfc4231Case2() {
        let key = TokenKey(id: "k", material: .hs256(secret: Array("Jefe".utf8)))
        XCTAssertEqual(crypto.sign(Array("what do ya want for nothing?".utf8), with: key),
                       hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    func test_tokenCrypto_randomBytes_differ() {
        let a = TokenCrypto.randomBytes(32), b = TokenCrypto.randomBytes(32)
        XCTAssertEqual(a?.count, 32)
        XCTAssertNotEqual(a, b)
    }

    private func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            out.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}

private extension SignedTokenOutcome {
    var isValid: Bool { if case .valid = self { return true } else { return false } }
}
