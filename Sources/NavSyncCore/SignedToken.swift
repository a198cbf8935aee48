/// The signatures a signed token may carry, checked by a module that wraps
/// a cryptographic library (NavSyncTLS's `TokenCrypto`, over OpenSSL); the
/// core never computes one itself.
public protocol TokenSignatures: Sendable {
    /// True when `signature` is what `key` makes of `message`: HMAC-SHA256
    /// compared in constant time, or an Ed25519 verification.
    func verify(signature: [UInt8], of message: ArraySlice<UInt8>, with key: TokenKey) -> Bool
}

/// Checks JSON Web Tokens (RFC 7519, compact form) against the keys of
/// `--token-keys` (PROTOCOL.md *Signed tokens*). Pure: it is given the time
/// and a `TokenSignatures`, and holds no secret a reply or a log line could
/// show.
///
/// What it refuses, and why, is listed in docs/HARDENING.md; in short, the
/// key is chosen by `kid` from the file only and fixes the algorithm, so a
/// token cannot pick `none`, or verify an HMAC with a public key as its
/// secret; the header is read before the signature is checked, the claims
/// only after.
public struct SignedTokenVerifier: Sendable {
    /// Clock skew forgiven on `exp` and `nbf`, in seconds.
    public static let leewaySeconds: Double = 30
    /// The longest part (header, payload, signature) read, in base64url letters.
    public static let longestPart = 8192
    /// Times above 2^53 s cannot be held exactly as a double (or shown
    /// as whole seconds); they are not real dates and are refused.
    public static let latestTime: Double = 9_007_199_254_740_992

    private let keys: [String: TokenKey]
    public let audience: String?
    private let signatures: any TokenSignatures

    public init(keys: [TokenKey], audience: String?, signatures: any TokenSignatures) {
        var table: [String: TokenKey] = [:]
        for key in keys { table[key.id] = key }
        self.keys = table
        self.audience = audience
        self.signatures = signatures
    }

    public var keyCount: Int { keys.count }

    /// What a presented token comes to at `now` (seconds since 1970).
    public func verify(_ token: String, now: Double) -> SignedTokenOutcome {
        verify(Array(token.utf8), now: now)
    }

    public func verify(_ token: [UInt8], now: Double) -> SignedTokenOutcome {
        switch verifiedClaims(token) {
        case .failure(let fault):
            return .invalid(fault)
        case .success(let verified):
            let (grant, claims) = verified
            if let expires = grant.lifetime?.expires, now >= expires + Self.leewaySeconds {
                return .notHolding(.expired)
            }
            if let notBefore = claims.notBefore, notBefore > now + Self.leewaySeconds {
                return .notHolding(.notYetValid)
            }
            if let audience, !claims.audiences.contains(audience) {
                return .notHolding(.wrongAudience)
            }
            return .valid(grant)
        }
    }

    /// Whether the token's signature still verifies with the key its `kid`
    /// names now, whatever the time: after a reload, a connection whose
    /// key is gone or different is revoked.
    public func stillSigned(_ token: String) -> Bool {
        if case .success = verifiedClaims(Array(token.utf8)) { return true }
        return false
    }

    private struct Claims {
        var notBefore: Double?
        var audiences: [String] = []
    }

    private func verifiedClaims(_ token: [UInt8]) -> Result<(Grant, Claims), SignedTokenFault> {
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.notThreeParts) }
        guard parts.allSatisfy({ $0.count <= Self.longestPart }) else { return .failure(.partTooLong) }
        guard let headerBytes = Base64URL.decode(parts[0]),
              let signature = Base64URL.decode(parts[2]) else { return .failure(.notBase64URL) }
        guard case .object(let header)? = try? StrictJSON.parse(headerBytes) else { return .failure(.headerNotJSONObject) }
        guard header["crit"] == nil else { return .failure(.criticalExtension) }
        guard case .string(let algorithm)? = header["alg"] else { return .failure(.algorithm) }
        guard case .string(let kid)? = header["kid"], let key = keys[kid] else { return .failure(.unknownKey) }
        if let typ = header["typ"], case .string = typ {} else if header["typ"] != nil { return .failure(.headerMember) }
        // The key fixes the algorithm; the header only has to agree with it.
        guard algorithm == key.jwtAlgorithm else { return .failure(.algorithm) }
        let signed = token[..<(parts[0].count + 1 + parts[1].count)]
        guard signatures.verify(signature: signature, of: signed, with: key) else { return .failure(.signature) }

        guard let payloadBytes = Base64URL.decode(parts[1]) else { return .failure(.notBase64URL) }
        guard case .object(let payload)? = try? StrictJSON.parse(payloadBytes) else { return .failure(.payloadNotJSONObject) }
        return Self.grant(from: payload, kid: kid)
    }

    private static func grant(from payload: [String: JSONValue], kid: String) -> Result<(Grant, Claims), SignedTokenFault> {
        guard case .string(let roleText)? = payload["role"], let role = Role(rawValue: roleText), role != .none else {
            return .failure(.claim("role"))
        }
        let rooms: Grant.Rooms
        switch payload["rooms"] {
        case .string("*")?:
            rooms = .every
        case .array(let list)? where !list.isEmpty:
            var names: Set<String> = []
            for element in list {
                guard case .string(let name) = element, Names.isValid(name) else { return .failure(.claim("rooms")) }
                names.insert(name)
            }
            rooms = .only(names)
        default:
            return .failure(.claim("rooms"))
        }
        guard let expires = time(payload["exp"]) else { return .failure(.claim("exp")) }
        var claims = Claims()
        if payload["nbf"] != nil {
            guard let notBefore = time(payload["nbf"]) else { return .failure(.claim("nbf")) }
            claims.notBefore = notBefore
        }
        if payload["iat"] != nil, time(payload["iat"]) == nil { return .failure(.claim("iat")) }
        var name = role.rawValue
        if let given = payload["name"] {
            guard case .string(let text) = given, Names.isValidMemberName(text) else { return .failure(.claim("name")) }
            name = text
        }
        for member in ["jti", "sub"] {
            if let value = payload[member], case .string = value {} else if payload[member] != nil {
                return .failure(.claim(member))
            }
        }
        switch payload["aud"] {
        case nil: break
        case .string(let one)?: claims.audiences = [one]
        case .array(let list)?:
            for element in list {
                guard case .string(let one) = element else { return .failure(.claim("aud")) }
                claims.audiences.append(one)
            }
        default: return .failure(.claim("aud"))
        }
        let grant = Grant(role: role, rooms: rooms, name: name, lifetime: TokenLifetime(expires: expires, keyID: kid))
        return .success((grant, claims))
    }

    /// A NumericDate: a finite number of seconds, fraction allowed, from 0 to 2^53.
    private static func time(_ value: JSONValue?) -> Double? {
        guard case .number(let seconds)? = value, seconds.isFinite, seconds >= 0, seconds <= latestTime else { return nil }
        return seconds
    }
}

/// What one token came to.
public enum SignedTokenOutcome: Sendable, Equatable {
    /// Good now: the grant, with its lifetime.
    case valid(Grant)
    /// Signed by a key of the file, but not for now or not for this daemon:
    /// a failure, and not a guess.
    case notHolding(SignedTokenRefusal)
    /// Not a token of these keys: a guess. The fault is for tests and
    /// docs; peers are told only `auth-failed`.
    case invalid(SignedTokenFault)
}

/// Why a verified token does not hold; `text` follows `auth-failed`.
public enum SignedTokenRefusal: String, Sendable, Equatable {
    case expired = "token expired"
    case notYetValid = "token not yet valid"
    case wrongAudience = "wrong audience"

    public var text: String { rawValue }
}

/// Why a token is no token of these keys.
public enum SignedTokenFault: Error, Sendable, Equatable {
    case notThreeParts
    case partTooLong
    case notBase64URL
    case headerNotJSONObject
    case headerMember
    case criticalExtension
    /// `alg` missing, unknown (`none` included) or not the key's.
    case algorithm
    /// `kid` missing or naming no key of the file.
    case unknownKey
    case signature
    case payloadNotJSONObject
    /// The named claim is missing where required, or of the wrong type or value.
    case claim(String)
}

/// For a grant that came from a signed token: when it stops holding (the
/// token's `exp`, seconds since 1970; the leeway comes on top) and the key
/// that vouched for it.
public struct TokenLifetime: Sendable, Equatable {
    public var expires: Double
    public var keyID: String

    public init(expires: Double, keyID: String) {
        self.expires = expires
        self.keyID = keyID
    }

    /// `WHOAMI`'s sixth field: `exp` rounded down to whole seconds.
    public var wholeSeconds: UInt64 { UInt64(expires.rounded(.down)) }

    /// Whether the grant has ended at `now`, leeway included.
    public func hasEnded(at now: Double) -> Bool { now >= expires + SignedTokenVerifier.leewaySeconds }
}
