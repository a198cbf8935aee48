/// The `--token-keys` file, and the minting side's key file: one key a
/// line, `KID ALG KEY`, fields separated by runs of spaces or tabs; blank
/// lines and lines whose first non-blank character is `#` are ignored. The
/// whole file is judged before any of it is used, so a reload takes every
/// line or none. Problems name the line, never the key.
public enum TokenKeysFile {
    /// The fewest bytes an `hs256` secret may have (RFC 7518 §3.2: at least
    /// the size of the hash).
    public static let shortestSecret = 32

    /// Who reads the file: the daemon verifies and must not hold a private
    /// key; `navsync token` signs and needs one.
    public enum Purpose: Sendable {
        case verifying
        case signing
    }

    /// Why the file was refused: the line and the reason. Never holds a key.
    public typealias Problem = ConfigFileProblem

    public static func parse(_ bytes: [UInt8], for purpose: Purpose) -> Result<[TokenKey], Problem> {
        var keys: [TokenKey] = []
        var lineOfKid: [String: Int] = [:]
        do {
            try ConfigLineReader.read(bytes) { line throws(Problem) in
                let key: TokenKey
                switch self.key(line.fields, for: purpose) {
                case .success(let parsed): key = parsed
                case .failure(let problem): throw Problem(line: line.number, reason: problem.reason)
                }
                if let earlier = lineOfKid[key.id] {
                    throw Problem(line: line.number, reason: "the kid \(key.id) of line \(earlier) again; kids must be unique")
                }
                lineOfKid[key.id] = line.number
                keys.append(key)
            }
        } catch {
            return .failure(error)
        }
        return .success(keys)
    }

    /// `[A-Za-z0-9._-]{1,64}`: the room rule.
    public static func isValidKeyID(_ kid: some StringProtocol) -> Bool { Names.isValid(kid) }

    private static func key(_ fields: [Substring], for purpose: Purpose) -> Result<TokenKey, Problem> {
        func refuse(_ reason: String) -> Result<TokenKey, Problem> { .failure(Problem(line: 0, reason: reason)) }
        guard fields.count == 3 else { return refuse("expected KID ALG KEY, found \(fields.count) fields") }
        guard isValidKeyID(fields[0]) else { return refuse("the kid is 1-64 characters of A-Z a-z 0-9 _ . -") }
        let kid = String(fields[0])
        // The reasons never quote the key: the message goes to the log.
        guard let material = Base64URL.decode(Array(fields[2].utf8)) else {
            return refuse("the key is not base64url without padding")
        }
        switch fields[1] {
        case "hs256":
            guard material.count >= shortestSecret else {
                return refuse("the hs256 secret is shorter than \(shortestSecret) bytes")
            }
            return .success(TokenKey(id: kid, material: .hs256(secret: material)))
        case "ed25519":
            guard material.count == 32 else { return refuse("an ed25519 public key is 32 bytes") }
            guard purpose == .verifying else {
                return refuse("an ed25519 public key cannot sign; use the ed25519-private line navsync keygen wrote")
            }
            return .success(TokenKey(id: kid, material: .ed25519(publicKey: material)))
        case "ed25519-private":
            guard purpose == .signing else {
                return refuse("an ed25519-private key does not belong on a daemon; give it the ed25519 line navsync keygen printed")
            }
            guard material.count == 32 else { return refuse("an ed25519 private key is its 32-byte seed") }
            return .success(TokenKey(id: kid, material: .ed25519Private(seed: material)))
        default:
            return refuse("the algorithm is hs256 or ed25519")
        }
    }
}

/// One key of a keys file. Its description never shows the material.
public struct TokenKey: Sendable, Equatable, CustomStringConvertible {
    public enum Material: Sendable, Equatable {
        case hs256(secret: [UInt8])
        case ed25519(publicKey: [UInt8])
        /// The signing side only: the 32-byte seed.
        case ed25519Private(seed: [UInt8])
    }

    public var id: String
    public var material: Material

    public init(id: String, material: Material) {
        self.id = id
        self.material = material
    }

    /// The JWT `alg` a token signed with this key carries.
    public var jwtAlgorithm: String {
        switch material {
        case .hs256: return "HS256"
        case .ed25519, .ed25519Private: return "EdDSA"
        }
    }

    /// The line of the file, as written (holds the key).
    public var fileLine: String {
        switch material {
        case .hs256(let secret): return "\(id) hs256 \(Base64URL.encode(secret))"
        case .ed25519(let key): return "\(id) ed25519 \(Base64URL.encode(key))"
        case .ed25519Private(let seed): return "\(id) ed25519-private \(Base64URL.encode(seed))"
        }
    }

    public var description: String { "key \(id) (\(jwtAlgorithm))" }
}
