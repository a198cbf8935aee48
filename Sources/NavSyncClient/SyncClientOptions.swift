import NavSyncCore

/// Names one request a caller submitted, so its reply can be told apart.
public typealias RequestID = Int

/// How a `SyncClient` behaves; the presets match the three ways `navsync` runs.
public struct SyncClientOptions: Sendable, Equatable {
    /// Joined right after connecting; nil or `main` stays in the default room.
    public var room: String?
    /// Sent with `AUTH` before anything else.
    public var token: String?
    /// Subscribe with `WATCH` and keep `snapshot` current.
    public var watch: Bool
    /// Ask for `SCREENS` on every connection.
    public var loadCatalog: Bool
    /// Ask for `STATS` with every heartbeat (for the watcher count).
    public var pollStats: Bool
    /// Ask `WHOAMI` on every connection, after `AUTH`, so the caller
    /// knows whether it may change the room (`identity`); presence asks it
    /// too, to know which member is itself.
    public var askIdentity = false
    /// Come back after a lost connection; otherwise the first loss stops the client.
    public var reconnect: Bool
    /// Keep trying when the very first connection cannot be made. Off, a
    /// daemon that was never reached stops the client after one bounded
    /// attempt (a typo in the address should not look like a daemon that
    /// went away); `reconnect` then matters only once connected.
    public var retryFirstConnection: Bool
    /// A `PING` goes out this long after the previous one; 0 sends none.
    public var heartbeatMilliseconds: UInt64
    /// A connection whose oldest unanswered command is this old is dead.
    public var replyTimeoutMilliseconds: UInt64
    /// A connect attempt that has not completed after this long is abandoned.
    public var connectTimeoutMilliseconds: UInt64
    public var backoff: ReconnectBackoff
    /// Said with `NAME` on every connection, before `WATCH`.
    public var name: String?
    /// Said with `NAME` when `name` is nil and the daemon's name for
    /// this connection is `anon` (`$USER` for the command-line client).
    public var fallbackName: String?
    /// Follow the room's members (`PRESENCE`) and keep `members` current.
    public var presence = false

    public init(room: String? = nil, token: String? = nil, watch: Bool, loadCatalog: Bool = false,
                pollStats: Bool = false, reconnect: Bool, retryFirstConnection: Bool = true,
                heartbeatMilliseconds: UInt64 = 2000,
                replyTimeoutMilliseconds: UInt64 = 4000, connectTimeoutMilliseconds: UInt64 = 3000,
                backoff: ReconnectBackoff = ReconnectBackoff()) {
        self.room = room
        self.token = token
        self.watch = watch
        self.loadCatalog = loadCatalog
        self.pollStats = pollStats
        self.reconnect = reconnect
        self.retryFirstConnection = retryFirstConnection
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.replyTimeoutMilliseconds = replyTimeoutMilliseconds
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.backoff = backoff
    }

    /// The full-screen client: watches, knows the catalog and the watcher count, never gives up.
    public static func interactive(room: String?, token: String?) -> SyncClientOptions {
        var options = SyncClientOptions(room: room, token: token, watch: true, loadCatalog: true, pollStats: true,
                                        reconnect: true)
        options.askIdentity = true
        return options
    }

    /// `navsync watch`: a stream of changes that survives daemon restarts;
    /// a daemon never reached ends it unless `retry`.
    public static func stream(room: String?, token: String?, retry: Bool = false) -> SyncClientOptions {
        SyncClientOptions(room: room, token: token, watch: true, reconnect: true, retryFirstConnection: retry)
    }

    /// One command and its reply; a lost connection is an error, not a retry.
    /// With `retry`, a daemon not reached yet is tried again until it answers
    /// (the request was never sent, so it cannot be made twice).
    public static func oneShot(room: String?, token: String?, retry: Bool = false) -> SyncClientOptions {
        SyncClientOptions(room: room, token: token, watch: false, reconnect: retry, retryFirstConnection: retry,
                          heartbeatMilliseconds: 0, replyTimeoutMilliseconds: 10_000, connectTimeoutMilliseconds: 5000)
    }
}
