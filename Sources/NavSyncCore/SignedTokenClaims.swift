/// What `navsync token` and `navsync link` put in a token they mint, and
/// the compact form around a signature (the signing itself is NavSyncTLS's).
/// The JSON is written here by hand, in a fixed order, so the output is the
/// same whichever platform's encoder would have been used.
public struct SignedTokenClaims: Sendable, Equatable {
    public var role: Role
    public var rooms: Grant.Rooms
    public var name: String?
    public var audience: String?
    /// Seconds since 1970.
    public var issuedAt: UInt64
    public var expires: UInt64
    /// A random id (`jti`); the daemon accepts it without checking it.
    public var tokenID: String

    public init(role: Role, rooms: Grant.Rooms, name: String?, audience: String?,
                issuedAt: UInt64, expires: UInt64, tokenID: String) {
        self.role = role
        self.rooms = rooms
        self.name = name
        self.audience = audience
        self.issuedAt = issuedAt
        self.expires = expires
        self.tokenID = tokenID
    }

    public func payloadJSON() -> String {
        var members = ["\"role\":\(Self.quoted(role.rawValue))"]
        switch rooms {
        case .every: members.append("\"rooms\":\"*\"")
        case .only(let names): members.append("\"rooms\":[" + names.sorted().map(Self.quoted).joined(separator: ",") + "]")
        }
        if let name { members.append("\"name\":\(Self.quoted(name))") }
        if let audience { members.append("\"aud\":\(Self.quoted(audience))") }
        members.append("\"iat\":\(issuedAt)")
        members.append("\"exp\":\(expires)")
        members.append("\"jti\":\(Self.quoted(tokenID))")
        return "{" + members.joined(separator: ",") + "}"
    }

    /// `header.payload` in base64url: the bytes the signature covers.
    public func signingInput(for key: TokenKey) -> String {
        let header = "{\"alg\":\(Self.quoted(key.jwtAlgorithm)),\"typ\":\"JWT\",\"kid\":\(Self.quoted(key.id))}"
        return Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payloadJSON().utf8))
    }

    /// The compact token: the signing input and the signature.
    public static func compact(signingInput: String, signature: [UInt8]) -> String {
        signingInput + "." + Base64URL.encode(signature)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// `--ttl`'s DURATION: a whole number followed by `s`, `m`, `h` or `d`.
public enum TokenDuration {
    /// Seconds, or nil for anything else (zero, a sign, no unit, an overflow).
    public static func seconds(_ text: String) -> UInt64? {
        guard let unit = text.last, let number = UInt64(text.dropLast()), number > 0,
              text.dropLast().allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        let scale: UInt64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86400
        default: return nil
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: scale)
        // Beyond a century is a mistake, not a lifetime.
        guard !overflow, product <= 100 * 365 * 86400 else { return nil }
        return product
    }
}
