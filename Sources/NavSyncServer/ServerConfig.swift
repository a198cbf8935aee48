import NavSyncCore

/// Everything the server is told at start; the daemon fills it from flags.
public struct ServerConfig: Sendable {
    public var limits = Limits()
    /// Every grant (`--tokens`, or `--token-file` as one `control *`
    /// grant); empty: no token is configured.
    public var grants: [GrantsFile.Entry]
    /// A token file was given: `AUTH` is a real question and the
    /// anonymous role defaults to `none`, even while the file holds no grant
    /// (an empty `--tokens` file must not open the daemon to everyone).
    public var tokensConfigured: Bool
    /// `--anonymous`; nil takes the default (`control` without tokens,
    /// `none` with them).
    public var anonymous: Role?
    /// Reported by `HELLO`, `STATS` and `--version`.
    public var version: String

    /// - Parameter token: `--token-file`'s secret: the one grant `control *`.
    public init(version: String, limits: Limits = Limits(), token: String? = nil,
                grants: [GrantsFile.Entry] = [], anonymous: Role? = nil, tokensConfigured: Bool = false) {
        self.version = version
        self.limits = limits
        self.grants = grants + (token.map { [Self.soleGrant($0)] } ?? [])
        self.anonymous = anonymous
        self.tokensConfigured = tokensConfigured || !self.grants.isEmpty
    }

    /// `--token-file`'s one grant: every command in every room, named `control`.
    public static func soleGrant(_ token: String) -> GrantsFile.Entry {
        GrantsFile.Entry(token: token, grant: Grant(role: .control, rooms: .every, name: Role.control.rawValue))
    }
}
