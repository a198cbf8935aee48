import Glibc

/// Files that hold a secret (`--token-file`, `--tokens`, `--tls-key`,
/// `--backplane-auth`, and the signed tokens' keys when they come): a
/// `warn` line at start, and on each SIGHUP that rereads the file, when
/// others may read it. Group-readable is fine: `root:navsync 0640` is how
/// the package lays them out, the group being the daemon's own.
enum SecretFile {
    /// Read permission for others (`o+r`), the one bit that warns.
    static let othersMayRead: mode_t = 0o004

    /// The warning for `path`, or nil when others may not read it (or it
    /// cannot be looked at: reading it says why).
    /// - Parameter what: what the file holds, for the line ("tokens file").
    static func exposureWarning(_ path: String, holding what: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & othersMayRead != 0 else { return nil }
        return "\(what) \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
            + "chmod o-r it (group-readable is fine)"
    }
}
