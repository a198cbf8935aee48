@testable import NavSyncCore
import XCTest

/// The keys file, base64url, the minting side's JSON and `--ttl`.
final class TokenKeysFileTests: XCTestCase {
    private let secret = Base64URL.encode(Array(repeating: UInt8(1), count: 32))
    private let thirtyTwo = Base64URL.encode(Array(repeating: UInt8(2), count: 32))

    func test_parse_bothKinds_commentsAndBlanks() throws {
        let file = "# keys\n\nwall hs256 \(secret)\r\n  laptop\ted25519   \(thirtyTwo)\n"
        let keys = try TokenKeysFile.parse(Array(file.utf8), for: .verifying).get()
        XCTAssertEqual(keys.map(\.id), ["wall", "laptop"])
        XCTAssertEqual(keys[0].material, .hs256(secret: Array(repeating: 1, count: 32)))
        XCTAssertEqual(keys[1].jwtAlgorithm, "EdDSA")
    }

    func test_parse_malformedTable_namesTheLineNeverTheKey() {
        let table: [(String, Int)] = [
            ("a hs256", 1),
            ("a hs256 \(secret) extra", 1),
            ("bad/kid hs256 \(secret)", 1),
            ("\(String(repeating: "k", count: 65)) hs256 \(secret)", 1),
            ("a hs512 \(secret)", 1),
            ("a hs256 \(Base64URL.encode(Array(repeating: UInt8(1), count: 31)))", 1),
            ("a hs256 \(secret)=", 1),
            ("a ed25519 \(Base64URL.encode(Array(repeating: UInt8(1), count: 31)))", 1),
            ("a ed25519-private \(thirtyTwo)", 1),
            ("a hs256 \(secret)\na hs256 \(thirtyTwo)", 2),
            ("# fine\na hs256 \u{FF}", 2),
        ]
        for (file, line) in table {
            guard case .failure(let problem) = TokenKeysFile.parse(Array(file.utf8), for: .verifying) else {
                XCTFail("accepted: \(file)"); continue
            }
            XCTAssertEqual(problem.line, line, file)
            XCTAssertFalse(problem.reason.contains(secret) || problem.reason.contains(thirtyTwo), "never the key: \(file)")
        }
        // The signing side takes the seed and refuses a public key.
        XCTAssertNoThrow(try TokenKeysFile.parse(Array("a ed25519-private \(thirtyTwo)".utf8), for: .signing).get())
        XCTAssertThrowsError(try TokenKeysFile.parse(Array("a ed25519 \(thirtyTwo)".utf8), for: .signing).get())
    }

    func test_base64URL_roundTripAndStrictness() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            XCTAssertFalse(text.contains("=") || text.contains("+") || text.contains("/"))
            XCTAssertEqual(Base64URL.decode(text), bytes)
        }
        XCTAssertEqual(Base64URL.decode("-_8"), [0xFB, 0xFF])
        XCTAssertNil(Base64URL.decode("A"), "one letter left over")
        XCTAssertNil(Base64URL.decode("AB"), "unused bits set: not canonical")
        XCTAssertEqual(Base64URL.decode("AA"), [0])
        XCTAssertNil(Base64URL.decode("AA=="))
        XCTAssertNil(Base64URL.decode("A A"))
    }

    func test_claims_payloadIsStrictJSON_inFixedOrder() throws {
        let claims = SignedTokenClaims(role: .view, rooms: .only(["b", "a"]), name: "wall-1", audience: "q\"x\n",
                                       issuedAt: 10, expires: 20, tokenID: "id")
        let json = claims.payloadJSON()
        XCTAssertEqual(json, #"{"role":"view","rooms":["a","b"],"name":"wall-1","aud":"q\"x\n","iat":10,"exp":20,"jti":"id"}"#)
        guard case .object(let members) = try StrictJSON.parse(Array(json.utf8)) else { return XCTFail("not an object") }
        XCTAssertEqual(members["aud"], .string("q\"x\n"))
        XCTAssertEqual(members["exp"], .number(20))
    }

    func test_duration_unitsAndRefusals() {
        XCTAssertEqual(TokenDuration.seconds("90s"), 90)
        XCTAssertEqual(TokenDuration.seconds("45m"), 2700)
        XCTAssertEqual(TokenDuration.seconds("8h"), 28800)
        XCTAssertEqual(TokenDuration.seconds("7d"), 604_800)
        for bad in ["", "8", "h", "0h", "-1h", "+1h", "1.5h", "1w", "99999999999999999999d", "40000d"] {
            XCTAssertNil(TokenDuration.seconds(bad), bad)
        }
    }

    func test_strictJSON_parse_values() throws {
        XCTAssertEqual(try StrictJSON.parse(Array(#"{"a":[1,2.5,-3e2],"b":true,"c":null,"d":"\u00e9"}"#.utf8)),
                       .object(["a": .array([.number(1), .number(2.5), .number(-300)]), "b": .bool(true), "c": .null,
                                "d": .string("é")]))
        XCTAssertEqual(try StrictJSON.parse(Array("1e400".utf8)), .number(.infinity))
    }
}
