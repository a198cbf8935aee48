import NavSyncCore

/// Everything the server is told at start; the daemon fills it from flags.
public struct ServerConfig: Sendable {
    public var limits = Limits()
    /// When set, every connection must `AUTH` with it first.
    public var token: String?
    /// Reported by `HELLO`, `STATS` and `--version`.
    public var version: String

    public init(version: String, limits: Limits = Limits(), token: String? = nil) {
        self.version = version
        self.limits = limits
        self.token = token
    }
}
