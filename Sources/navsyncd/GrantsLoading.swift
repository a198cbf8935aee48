import Glibc
import NavSyncCore
import NavSyncServer
import RedisClient
import UVLoop

/// Where the daemon's grants come from, read at start and on SIGHUP.
enum GrantsSource {
    /// `--tokens FILE`: one grant a line.
    case tokens(String)
    /// `--token-file FILE`: its first line is the one grant `control *`.
    case tokenFile(String)

    var path: String {
        switch self {
        case .tokens(let path), .tokenFile(let path): return path
        }
    }

    /// Every grant of the file. The message of a failure names the file
    /// (and the line) and never holds a token.
    func load() throws(DaemonStartError) -> [GrantsFile.Entry] {
        switch self {
        case .tokenFile(let path):
            switch TokenFile.read(path, using: SyncFile.readAll) {
            case .success(let token): return [ServerConfig.soleGrant(token)]
            case .failure(let problem): throw DaemonStartError(problem.description)
            }
        case .tokens(let path):
            let bytes: [UInt8]?
            do {
                bytes = try SyncFile.readAll(path: path)
            } catch {
                throw DaemonStartError("tokens file \(path): cannot read: \(error)")
            }
            guard let bytes else { throw DaemonStartError("tokens file \(path): no such file") }
            switch GrantsFile.parse(bytes) {
            case .success(let entries): return entries
            case .failure(let problem): throw DaemonStartError("tokens file " + problem.described(file: path))
            }
        }
    }

    /// A warning when others may read the file: anyone who can read it can
    /// steer every room it grants. Group-readable no longer warns.
    var exposureWarning: String? {
        switch self {
        case .tokens(let path): return SecretFile.exposureWarning(path, holding: "tokens file")
        case .tokenFile(let path): return SecretFile.exposureWarning(path, holding: "token file")
        }
    }
}

/// `--backplane-auth FILE`: Redis's password, or an ACL user and its
/// password, from the file's first line. The message of a failure names
/// the file and never its content.
func loadBackplaneCredentials(_ path: String) throws(DaemonStartError) -> RedisCredentials {
    let bytes: [UInt8]?
    do {
        bytes = try SyncFile.readAll(path: path)
    } catch {
        throw DaemonStartError("backplane auth file \(path): cannot read: \(error)")
    }
    guard let bytes else { throw DaemonStartError("backplane auth file \(path): no such file") }
    switch RedisCredentials.parse(bytes) {
    case .success(let credentials): return credentials
    case .failure(let problem): throw DaemonStartError("backplane auth file \(path): \(problem.reason)")
    }
}
