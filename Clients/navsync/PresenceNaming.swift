import NavSyncClient
import NavSyncCore

/// The name the terminal client and `watch` give themselves: `--name`
/// when given; otherwise the daemon's name is kept unless it is `anon`, and
/// then `$USER` is said instead when it is a valid name (COMMANDS.md).
struct PresenceNaming: Equatable {
    var name: String?
    var fallback: String?

    init(name: String? = nil, environment: [String: String] = [:]) {
        self.name = name
        let user = environment["USER"] ?? ""
        self.fallback = Names.isValidMemberName(user) ? user : nil
    }

    /// The options with the names set: the state machine says `NAME` in its greeting.
    func applied(to options: SyncClientOptions) -> SyncClientOptions {
        var named = options
        named.name = name
        named.fallbackName = fallback
        return named
    }
}
