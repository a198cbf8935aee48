import Glibc
import NavSyncCore
import NavSyncServer
import NavSyncTLS
import UVLoop

/// `--token-keys FILE` and `--token-audience`: the keys signed tokens are
/// checked with, read at start and on SIGHUP, and the timer that ends
/// connections whose token expired.
/// Must be used on the loop thread only.
final class SignedTokenKeys {
    let path: String
    let audience: String?
    private let server: Server
    private let log: Logger
    private var expiryTimer: LoopTimer?

    /// How often live connections are checked for an expired token. A
    /// connection outlives its `exp` + leeway by less than this.
    static let expiryCheckMilliseconds: UInt64 = 1000

    init(path: String, audience: String?, server: Server, log: Logger) {
        self.path = path
        self.audience = audience
        self.server = server
        self.log = log
    }

    /// Seconds since 1970, with the fraction.
    static func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }

    /// The file's keys; a failure names the file and the line, never a key.
    func load() throws(DaemonStartError) -> [TokenKey] {
        let bytes: [UInt8]?
        do {
            bytes = try SyncFile.readAll(path: path)
        } catch {
            throw DaemonStartError("token keys file \(path): cannot read: \(error)")
        }
        guard let bytes else { throw DaemonStartError("token keys file \(path): no such file") }
        switch TokenKeysFile.parse(bytes, for: .verifying) {
        case .success(let keys): return keys
        case .failure(let problem): throw DaemonStartError("token keys file " + problem.described(file: path))
        }
    }

    var exposureWarning: String? { SecretFile.exposureWarning(path, holding: "token keys file") }

    /// At start: the keys (exit 1 on a bad file), then the expiry timer.
    func start(loop: EventLoop) throws(DaemonStartError) {
        let keys = try load()
        server.reload(signedTokens: verifier(keys), wallClock: Self.wallClock)
        log.info("\(keys.count) token keys loaded from \(path)" + (audience.map { " (audience \($0))" } ?? ""))
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: Self.expiryCheckMilliseconds, repeatMilliseconds: Self.expiryCheckMilliseconds) { [unowned self] in
            let ended = self.server.endExpiredGrants()
            if ended > 0 { self.log.info("\(ended) connections closed: signed token expired") }
        }
        // The timer alone must not keep the loop alive at shutdown.
        timer.unref()
        expiryTimer = timer
    }

    /// SIGHUP: the file again; connections whose key is gone or changed are
    /// revoked. A file that cannot be read or parsed keeps the old keys.
    func reload() {
        if let warning = exposureWarning { log.warn("SIGHUP: \(warning)") }
        do {
            let keys = try load()
            let revoked = server.reload(signedTokens: verifier(keys), wallClock: Self.wallClock)
            log.info("SIGHUP: \(keys.count) token keys reloaded from \(path); \(revoked) connections closed (key removed or changed)")
        } catch {
            log.error("SIGHUP: kept the old token keys: \(error)")
        }
    }

    func close() {
        expiryTimer?.close()
        expiryTimer = nil
    }

    private func verifier(_ keys: [TokenKey]) -> SignedTokenVerifier {
        SignedTokenVerifier(keys: keys, audience: audience, signatures: TokenCrypto())
    }
}
