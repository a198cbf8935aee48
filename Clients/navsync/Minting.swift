import GNUFlags
import Glibc
import NavSyncCore
import NavSyncTLS
import UVLoop

/// `navsync keygen`, `token` and `link` (COMMANDS.md): making a signing key,
/// and signed tokens and links to the web page from it. None of them
/// connects to a daemon. The cryptography is OpenSSL's (NavSyncTLS's
/// `TokenCrypto`); the token's JSON is NavSyncCore's.
enum Minting {
    static let commands: Set<String> = ["keygen", "token", "link"]

    static let usage = """
        usage: navsync keygen --kid KID [--alg ed25519|hs256] FILE
               navsync token --signing-key FILE --role control|view --rooms ROOMS [--name NAME]
                             [--ttl DURATION] [--audience AUD] [--kid KID]
               navsync link --signing-key FILE --url BASE --room ROOM [--role view|control] [--name NAME]
                            [--ttl DURATION] [--audience AUD] [--kid KID] [--display] [--qr|--no-qr]
        """

    static func run(_ command: String, _ arguments: [String]) -> Int32 {
        do {
            switch command {
            case "keygen": return try keygen(arguments)
            case "token": return try token(arguments)
            default: return try link(arguments)
            }
        } catch let error as CommandLineSpec.UsageError {
            Output.complain("\(error) (see navsync --help)")
            return 64
        } catch {
            Output.complain("\(error)")
            return 1
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// `--version` works with every command (COMMANDS.md), these included.
    static func printVersion() -> Int32 {
        Output.out("navsync \(NavSyncVersion.current) (protocol \(NavSyncVersion.protocolVersion))\n")
        return 0
    }

    // MARK: - keygen

    static let keygenSpec = CommandLineSpec(valued: ["kid", "alg"], switches: ["help", "version"], shortAliases: ["h": "help"])

    /// Writes the minting line to FILE (0600, never over an existing file)
    /// and prints the daemon's line.
    static func keygen(_ arguments: [String]) throws -> Int32 {
        let parsed = try keygenSpec.parse(arguments)
        if parsed.has("help") { Output.out(usage + "\n"); return 0 }
        if parsed.has("version") { return printVersion() }
        guard parsed.positionals.count == 1, !parsed.positionals[0].isEmpty else {
            throw CommandLineSpec.UsageError("keygen needs one FILE to write the signing key to")
        }
        guard let kid = parsed.last("kid"), TokenKeysFile.isValidKeyID(kid) else {
            throw CommandLineSpec.UsageError("keygen needs --kid KID: 1-64 characters of A-Z a-z 0-9 _ . -")
        }
        let path = parsed.positionals[0]
        let signing: TokenKey, verifying: TokenKey
        switch parsed.last("alg") ?? "ed25519" {
        case "ed25519":
            guard let seed = TokenCrypto.randomBytes(32), let publicKey = TokenCrypto.ed25519PublicKey(seed: seed) else {
                throw Failure(description: "the system's secure random source gave no bytes")
            }
            signing = TokenKey(id: kid, material: .ed25519Private(seed: seed))
            verifying = TokenKey(id: kid, material: .ed25519(publicKey: publicKey))
        case "hs256":
            guard let secret = TokenCrypto.randomBytes(32) else {
                throw Failure(description: "the system's secure random source gave no bytes")
            }
            signing = TokenKey(id: kid, material: .hs256(secret: secret))
            verifying = signing
        case let other:
            throw CommandLineSpec.UsageError("--alg is ed25519 or hs256, not '\(other)'")
        }
        try writeNew(path, "# navsync signing key, made by navsync keygen: keep it secret\n" + signing.fileLine + "\n")
        Output.out(verifying.fileLine + "\n")
        return 0
    }

    /// Creates `path` with mode 0600 and writes `text`; an existing file is
    /// never replaced.
    static func writeNew(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it already exists; keygen never overwrites a key" : String(cString: strerror(errno))
            throw Failure(description: "cannot create \(path): \(reason)")
        }
        defer { close(fd) }
        _ = fchmod(fd, 0o600)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    // MARK: - token

    static let tokenSpec = CommandLineSpec(
        valued: ["signing-key", "role", "rooms", "name", "ttl", "audience", "kid"], switches: ["help", "version"], shortAliases: ["h": "help"])

    static func token(_ arguments: [String]) throws -> Int32 {
        let parsed = try tokenSpec.parse(arguments)
        if parsed.has("help") { Output.out(usage + "\n"); return 0 }
        if parsed.has("version") { return printVersion() }
        try noPositionals(parsed)
        guard let roomsText = parsed.last("rooms") else { throw CommandLineSpec.UsageError("token needs --rooms ('*' or a comma list)") }
        guard parsed.last("role") != nil else { throw CommandLineSpec.UsageError("token needs --role control or view") }
        let rooms: Grant.Rooms
        if roomsText == "*" {
            rooms = .every
        } else {
            let names = roomsText.split(separator: ",", omittingEmptySubsequences: false)
            guard names.allSatisfy(Names.isValid) else {
                throw CommandLineSpec.UsageError("--rooms is * or a comma list of room names (A-Z a-z 0-9 _ . -), not '\(roomsText)'")
            }
            rooms = .only(Set(names.map(String.init)))
        }
        let request = try MintRequest(parsed, rooms: rooms, defaultRole: nil)
        Output.out(try request.mint() + "\n")
        return 0
    }

    // MARK: - link

    static let linkSpec = CommandLineSpec(
        valued: ["signing-key", "url", "room", "role", "name", "ttl", "audience", "kid"],
        switches: ["help", "version", "display", "qr", "no-qr"], shortAliases: ["h": "help"])

    static func link(_ arguments: [String]) throws -> Int32 {
        let parsed = try linkSpec.parse(arguments)
        if parsed.has("help") { Output.out(usage + "\n"); return 0 }
        if parsed.has("version") { return printVersion() }
        try noPositionals(parsed)
        guard let base = parsed.last("url"), base.hasPrefix("http://") || base.hasPrefix("https://") else {
            throw CommandLineSpec.UsageError("link needs --url BASE, the page's http:// or https:// address")
        }
        guard let room = parsed.last("room"), Names.isValid(room) else {
            throw CommandLineSpec.UsageError("link needs --room ROOM, a room name (A-Z a-z 0-9 _ . -)")
        }
        if parsed.has("qr") && parsed.has("no-qr") { throw CommandLineSpec.UsageError("--qr and --no-qr do not go together") }
        let request = try MintRequest(parsed, rooms: .only([room]), defaultRole: .view)
        if let host = LinkAddress.plainHTTPHost(base), !LinkAddress.isLoopback(host) {
            Output.err("navsync: warning: \(base) is plain http:// beyond this machine; the token would cross the network in the clear (use https://)")
        }
        let link = LinkAddress.link(base: base, room: room, display: parsed.has("display"), name: request.name,
                                    token: try request.mint())
        Output.out(link + "\n")
        let wantsQR = parsed.has("qr") || (!parsed.has("no-qr") && isatty(1) == 1)
        if wantsQR {
            guard let drawing = QRCodeText.draw(link) else { throw Failure(description: "the link is too long for a QR code") }
            Output.out(drawing)
        }
        return 0
    }

    static func noPositionals(_ parsed: CommandLineSpec.Parsed) throws {
        if let extra = parsed.positionals.first { throw CommandLineSpec.UsageError("unexpected argument '\(extra)'") }
    }
}

/// The flags `token` and `link` share, read and checked, and the key they name.
struct MintRequest {
    var key: TokenKey
    var role: Role
    var rooms: Grant.Rooms
    var name: String?
    var audience: String?
    var lifetime: UInt64

    init(_ parsed: CommandLineSpec.Parsed, rooms: Grant.Rooms, defaultRole: Role?) throws {
        guard let path = parsed.last("signing-key"), !path.isEmpty else {
            throw CommandLineSpec.UsageError("--signing-key FILE is needed: the file navsync keygen wrote")
        }
        let roleText = parsed.last("role") ?? defaultRole?.rawValue ?? ""
        guard let role = Role(rawValue: roleText), role != .none else {
            throw CommandLineSpec.UsageError("--role is control or view, not '\(roleText)'")
        }
        self.role = role
        self.rooms = rooms
        name = parsed.last("name")
        if let name, !Names.isValidMemberName(name) {
            throw CommandLineSpec.UsageError("--name is 1-64 characters of A-Z a-z 0-9 _ . @ -, not '\(name)'")
        }
        audience = parsed.last("audience")
        if audience?.isEmpty == true { throw CommandLineSpec.UsageError("--audience needs a value") }
        let ttl = parsed.last("ttl") ?? "8h"
        guard let seconds = TokenDuration.seconds(ttl) else {
            throw CommandLineSpec.UsageError("--ttl is a number and s, m, h or d (90s, 45m, 8h, 7d), not '\(ttl)'")
        }
        lifetime = seconds
        let kid = parsed.last("kid")
        key = try Self.signingKey(path, kid: kid)
    }

    static func signingKey(_ path: String, kid: String?) throws -> TokenKey {
        let bytes: [UInt8]?
        do {
            bytes = try SyncFile.readAll(path: path)
        } catch {
            throw Minting.Failure(description: "signing key \(path): cannot read: \(error)")
        }
        guard let bytes else { throw Minting.Failure(description: "signing key \(path): no such file") }
        let keys: [TokenKey]
        switch TokenKeysFile.parse(bytes, for: .signing) {
        case .success(let parsed): keys = parsed
        case .failure(let problem): throw Minting.Failure(description: "signing key " + problem.described(file: path))
        }
        if let kid {
            guard let key = keys.first(where: { $0.id == kid }) else {
                throw Minting.Failure(description: "signing key \(path): no key with kid \(kid)")
            }
            return key
        }
        guard let first = keys.first else { throw Minting.Failure(description: "signing key \(path): the file holds no key") }
        return first
    }

    /// The compact token: `iat` now, `exp` now + the lifetime, a random `jti`.
    func mint() throws -> String {
        let now = UInt64(max(0, time(nil)))
        guard let random = TokenCrypto.randomBytes(16) else {
            throw Minting.Failure(description: "the system's secure random source gave no bytes")
        }
        let claims = SignedTokenClaims(role: role, rooms: rooms, name: name, audience: audience, issuedAt: now,
                                       expires: now + lifetime, tokenID: Base64URL.encode(random))
        let input = claims.signingInput(for: key)
        guard let signature = TokenCrypto().sign(Array(input.utf8), with: key) else {
            throw Minting.Failure(description: "could not sign with \(key)")
        }
        return SignedTokenClaims.compact(signingInput: input, signature: signature)
    }
}

/// The link `navsync link` prints, and what it warns about.
enum LinkAddress {
    /// `BASE/?room=ROOM[&display][&name=NAME]#token=TOKEN`, a trailing `/`
    /// of BASE dropped and query values percent-encoded.
    static func link(base: String, room: String, display: Bool, name: String?, token: String) -> String {
        var trimmed = Substring(base)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        var query = "room=" + percentEncoded(room)
        if display { query += "&display" }
        if let name { query += "&name=" + percentEncoded(name) }
        return "\(trimmed)/?\(query)#token=\(token)"
    }

    /// Every byte but the unreserved ones (RFC 3986) as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// The host of an `http://` BASE (brackets of an IPv6 literal removed);
    /// nil for `https://`.
    static func plainHTTPHost(_ base: String) -> String? {
        guard base.hasPrefix("http://") else { return nil }
        let authority = base.dropFirst("http://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@").last ?? authority
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
            return String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
        }
        return String(hostPort.prefix { $0 != ":" })
    }

    static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "localhost" || lower == "::1" { return true }
        var v4 = in_addr()
        return inet_pton(AF_INET, lower, &v4) == 1 && UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
}
