import GNUFlags
import Glibc
import NavSyncCore
import NavSyncBackplane
import NavSyncServer
import NavSyncWeb
import RedisClient

/// `navsyncd`'s flags, read and validated. Anything wrong here is a usage
/// error (exit 64); problems with the files they name are found later.
struct DaemonOptions {
    var listen: [HostPort] = [HostPort(host: "127.0.0.1", port: 7878)]
    var unixPath: String?
    /// nil means memory only (`--state none`).
    var statePath: String?
    /// Only the default state path gets its missing directories made; a
    /// path the operator typed is taken as given, so a typo is an error
    /// rather than a fresh, empty state somewhere unexpected.
    var stateDirectoryMayBeCreated = false
    var screensPath: String?
    var tokenPath: String?
    var limits = Limits()
    var syncPolicy: Journal.SyncPolicy = .batch
    var logLevel: LogLevel = .info
    /// Browser origins allowed to open `/ws` besides the daemon's own page.
    var allowedOrigins: [String] = []
    /// `--backplane`: the rooms live in this Redis, shared by a fleet.
    var backplane: RedisEndpoint?
    var backplanePrefix = "navsync:"
    var replaceCatalog = false
    /// `--tls-listen`: addresses served inside TLS, with `tlsCertificate` and `tlsKey`.
    var tlsListen: [HostPort] = []
    var tlsCertificate: String?
    var tlsKey: String?
    /// `--max-handshakes`: TLS handshakes in progress at once.
    var maxHandshakes = 256
    var wantsHelp = false
    var wantsVersion = false
    // Access.
    /// `--tokens` or `--token-file`: where the grants come from; nil: no token.
    var grants: GrantsSource?
    /// `--anonymous`; nil takes the default (control without tokens, none with).
    var anonymous: Role?
    /// `--backplane-auth`: the file holding Redis's password (or user and password).
    var backplaneAuthPath: String?
    /// `--token-keys`: the keys signed tokens are checked with; nil: no signed tokens.
    var tokenKeysPath: String?
    /// `--token-audience`: the `aud` signed tokens must carry.
    var tokenAudience: String?

    /// Tokens of some kind are configured: `--anonymous` defaults to none.
    var tokensConfigured: Bool { grants != nil || tokenKeysPath != nil }

    static let spec = CommandLineSpec(
        valued: ["listen", "unix", "state", "screens", "token-file", "max-clients", "max-line",
                 "max-pending", "max-output-memory", "max-depth", "max-rooms", "fsync", "history", "history-bytes", "keepalive",
                 "log-level", "allow-origin", "backplane", "backplane-prefix",
                 "tokens", "anonymous", "backplane-auth", "tls-listen", "tls-cert", "tls-key",
                 "max-handshakes", "token-keys", "token-audience"],
        switches: ["help", "version", "replace-catalog"],
        shortAliases: ["h": "help"])

    static let usage = """
        usage: navsyncd [--listen HOST:PORT]... [--unix PATH] [--state FILE|none]
                        [--screens FILE] [--token-file FILE] [--max-clients N]
                        [--max-line BYTES] [--max-pending BYTES]
                        [--max-output-memory BYTES] [--max-depth N]
                        [--max-rooms N] [--fsync always|batch]
                        [--history N] [--history-bytes BYTES] [--keepalive SECONDS]
                        [--allow-origin ORIGIN]... [--backplane URL] [--backplane-prefix P]
                        [--replace-catalog] [--tls-listen HOST:PORT]... [--tls-cert FILE]
                        [--tls-key FILE] [--log-level debug|info|warn|error]
                        [--tokens FILE] [--anonymous none|view|control] [--backplane-auth FILE]
                        [--max-handshakes N] [--token-keys FILE] [--token-audience AUD]

          --listen HOST:PORT   address to serve, repeatable (default 127.0.0.1:7878;
                               [::1]:PORT for IPv6; port 0 picks a free port)
          --unix PATH          also serve on a Unix socket (mode 0600)
          --state FILE|none    state file (default $XDG_STATE_HOME/navsync/state.json,
                               else ~/.local/state/navsync/state.json); none = memory only
          --screens FILE       JSON catalog (default: built-in red, green, blue)
          --token-file FILE    clients must AUTH with this file's first line
          --max-clients N      connections (default 10000)
          --max-line BYTES     bytes per command line, at least 64 (default 4096)
          --max-pending BYTES  unsent bytes per watcher before it is resynced (default 1048576)
          --max-output-memory BYTES
                               unsent bytes for all connections together; past it the
                               largest queues are resynced first (default 268435456)
          --max-depth N        entries of a stack and its sheets together (default 64)
          --max-rooms N        rooms holding state (default 1024)
          --fsync always|batch fsync before each acknowledgement, or once per loop turn
                               after the write (default batch)
          --history N          changes each room keeps for WATCH <rev> (default 1024)
          --history-bytes BYTES  at most this much history per room (default 1048576)
          --keepalive SECONDS  idle time before TCP keepalive probes; 0 = off (default 60)
          --allow-origin ORIGIN
                               a web origin such as https://ops.example whose pages
                               may open /ws (besides the daemon's own), repeatable
          --backplane URL      keep the rooms in Redis (redis://HOST:PORT[/DB] or
                               unix:PATH), shared by every daemon given the same URL;
                               not together with --state
          --backplane-prefix P prefix of the backplane's keys and channels (default navsync:)
          --replace-catalog    with --backplane: make this daemon's catalog the fleet's
          --tokens FILE        grants, one a line: ROLE ROOMS TOKEN [NAME], ROLE control or
                               view, ROOMS * or a comma list (not with --token-file)
          --anonymous none|view|control
                               what a connection may do before AUTH (default control
                               without tokens, none with them)
          --backplane-auth FILE
                               Redis credentials: the file's first line is PASSWORD or
                               USER PASSWORD (never give them on the command line)
          --tls-listen HOST:PORT
                               address to serve inside TLS (1.2 or 1.3), repeatable; with
                               it and no --listen, no plain TCP listener is opened
          --tls-cert FILE      PEM certificate (chain) for the TLS listeners; reread on SIGHUP
          --tls-key FILE       PEM private key for it; reread on SIGHUP
          --max-handshakes N   TLS handshakes in progress at once, an eighth of them at most
                               from one address; past it the oldest is closed (default 256)
          --token-keys FILE    keys for signed tokens (JWT), one a line: KID hs256 SECRET or
                               KID ed25519 PUBLIC (navsync keygen prints them); reread on SIGHUP
          --token-audience AUD signed tokens must carry this aud (needs --token-keys)
          --log-level LEVEL    debug, info, warn or error (default info)
          -h, --help           this text
          --version            print the version
        """

    static func parse(_ arguments: [String], environment: [String: String]) throws(CommandLineSpec.UsageError) -> DaemonOptions {
        let parsed = try spec.parse(arguments)
        var options = DaemonOptions()
        options.wantsHelp = parsed.has("help")
        options.wantsVersion = parsed.has("version")
        guard parsed.positionals.isEmpty else {
            throw CommandLineSpec.UsageError("unexpected argument '\(parsed.positionals[0])'")
        }
        let listen = parsed.values("listen")
        if !listen.isEmpty {
            options.listen = []
            for text in listen {
                let address = try listenAddress(text)
                options.listen.append(HostPort(host: try listenHost(address.host), port: address.port))
            }
        }
        let tlsListen = parsed.values("tls-listen")
        for text in tlsListen {
            let address = try listenAddress(text, flag: "--tls-listen")
            options.tlsListen.append(HostPort(host: try listenHost(address.host, flag: "--tls-listen"), port: address.port))
        }
        // A TLS-only daemon: the default plain address applies only when neither flag is given.
        if listen.isEmpty && !tlsListen.isEmpty { options.listen = [] }
        options.tlsCertificate = parsed.last("tls-cert")
        options.tlsKey = parsed.last("tls-key")
        if !tlsListen.isEmpty {
            guard let certificate = options.tlsCertificate, !certificate.isEmpty,
                  let key = options.tlsKey, !key.isEmpty else {
                throw CommandLineSpec.UsageError("--tls-listen needs --tls-cert FILE and --tls-key FILE")
            }
        } else if options.tlsCertificate != nil || options.tlsKey != nil {
            throw CommandLineSpec.UsageError("--tls-cert and --tls-key go with --tls-listen")
        }
        options.unixPath = parsed.last("unix")
        if let path = options.unixPath, path.isEmpty { throw CommandLineSpec.UsageError("--unix needs a path") }
        if let url = parsed.last("backplane") {
            guard let endpoint = RedisEndpoint(url: url) else {
                throw CommandLineSpec.UsageError("--backplane is redis://HOST:PORT[/DB] or unix:PATH, not '\(url)'")
            }
            guard parsed.last("state") == nil else {
                throw CommandLineSpec.UsageError("--backplane and --state do not go together: with a backplane the rooms live in Redis")
            }
            options.backplane = endpoint
        }
        if let prefix = parsed.last("backplane-prefix") {
            guard BackplaneKeys.isValidPrefix(prefix) else {
                throw CommandLineSpec.UsageError("--backplane-prefix is 1-64 printable characters without spaces or braces, not '\(prefix)'")
            }
            options.backplanePrefix = prefix
        }
        options.replaceCatalog = parsed.has("replace-catalog")
        if options.backplane == nil && (options.replaceCatalog || parsed.last("backplane-prefix") != nil) {
            throw CommandLineSpec.UsageError("--replace-catalog and --backplane-prefix need --backplane")
        }
        switch parsed.last("state") {
        case "none"?: options.statePath = nil
        case let path?:
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--state needs a file or none") }
            options.statePath = path
        case nil:
            options.statePath = options.backplane == nil ? defaultStatePath(environment) : nil
            options.stateDirectoryMayBeCreated = true
        }
        options.screensPath = parsed.last("screens")
        options.tokenPath = parsed.last("token-file")
        if let text = parsed.last("max-handshakes") {
            options.maxHandshakes = try CommandLineSpec.positiveInt(text, flag: "max-handshakes")
        }
        if let text = parsed.last("max-clients") {
            options.limits.maxClients = try CommandLineSpec.positiveInt(text, flag: "max-clients")
        }
        if let text = parsed.last("max-line") {
            options.limits.maxLineBytes = try CommandLineSpec.positiveInt(
                text, flag: "max-line", minimum: Limits.smallestMaxLineBytes)
        }
        if let text = parsed.last("max-pending") {
            options.limits.maxPendingBytes = try CommandLineSpec.positiveInt(text, flag: "max-pending")
        }
        if let text = parsed.last("max-output-memory") {
            options.limits.maxOutputMemoryBytes = try CommandLineSpec.positiveInt(text, flag: "max-output-memory")
        }
        if let text = parsed.last("max-depth") {
            options.limits.maxDepth = try CommandLineSpec.positiveInt(text, flag: "max-depth")
        }
        if let text = parsed.last("max-rooms") {
            options.limits.maxRooms = try CommandLineSpec.positiveInt(text, flag: "max-rooms")
        }
        if let text = parsed.last("history") {
            options.limits.historyCount = try CommandLineSpec.positiveInt(text, flag: "history")
        }
        if let text = parsed.last("history-bytes") {
            options.limits.historyBytes = try CommandLineSpec.positiveInt(text, flag: "history-bytes")
        }
        if let text = parsed.last("keepalive") {
            // The one numeric flag where 0 is valid: it turns keepalive off.
            let seconds = try CommandLineSpec.positiveInt(text, flag: "keepalive", minimum: 0)
            guard seconds <= Limits.largestKeepaliveSeconds else {
                throw CommandLineSpec.UsageError(
                    "--keepalive is at most \(Limits.largestKeepaliveSeconds) seconds (the kernel's limit), not '\(text)'")
            }
            options.limits.keepaliveSeconds = seconds
        }
        if let text = parsed.last("fsync") {
            guard let policy = Journal.SyncPolicy(rawValue: text) else {
                throw CommandLineSpec.UsageError("--fsync is always or batch, not '\(text)'")
            }
            options.syncPolicy = policy
        }
        if let text = parsed.last("log-level") {
            guard let level = LogLevel(name: text) else {
                throw CommandLineSpec.UsageError("--log-level is debug, info, warn or error, not '\(text)'")
            }
            options.logLevel = level
        }
        for origin in parsed.values("allow-origin") {
            guard WebAccess.normalizedOrigin(origin) != nil else {
                throw CommandLineSpec.UsageError("--allow-origin wants SCHEME://HOST[:PORT] such as https://ops.example, not '\(origin)'")
            }
            options.allowedOrigins.append(origin)
        }
        try parseAccess(parsed, into: &options)
        return options
    }

    /// `--tokens`, `--anonymous`, `--backplane-auth`, and the refusal
    /// to listen beyond loopback while anyone could change state.
    static func parseAccess(_ parsed: CommandLineSpec.Parsed, into options: inout DaemonOptions) throws(CommandLineSpec.UsageError) {
        switch (parsed.last("tokens"), options.tokenPath) {
        case (_?, _?):
            throw CommandLineSpec.UsageError("--tokens and --token-file do not go together: --token-file is the one grant control *")
        case (let path?, nil):
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--tokens needs a file") }
            options.grants = .tokens(path)
        case (nil, let path?):
            options.grants = .tokenFile(path)
        case (nil, nil):
            options.grants = nil
        }
        if let path = parsed.last("token-keys") {
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--token-keys needs a file") }
            options.tokenKeysPath = path
        }
        if let audience = parsed.last("token-audience") {
            guard options.tokenKeysPath != nil else {
                throw CommandLineSpec.UsageError("--token-audience needs --token-keys: only signed tokens carry an audience")
            }
            guard !audience.isEmpty else { throw CommandLineSpec.UsageError("--token-audience needs a value") }
            options.tokenAudience = audience
        }
        if let text = parsed.last("anonymous") {
            guard let role = Role(rawValue: text) else {
                throw CommandLineSpec.UsageError("--anonymous is none, view or control, not '\(text)'")
            }
            guard role == .control || options.tokensConfigured else {
                throw CommandLineSpec.UsageError("--anonymous \(text) needs --tokens or --token-keys: with no token nobody could ever change anything")
            }
            options.anonymous = role
        }
        if let path = parsed.last("backplane-auth") {
            guard options.backplane != nil else { throw CommandLineSpec.UsageError("--backplane-auth needs --backplane") }
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--backplane-auth needs a file") }
            options.backplaneAuthPath = path
        }
        // Redis's protected mode, for navsync: no token and no explicit
        // --anonymous control means anyone who reaches the port steers.
        // TLS hides the traffic, not who may steer: its listeners count too.
        if !options.tokensConfigured && options.anonymous == nil,
           let exposed = (options.listen + options.tlsListen).first(where: { !isLoopback($0.host) }) {
            throw CommandLineSpec.UsageError(
                "refusing to listen on \(exposed) (not loopback) while anyone could change state: "
                + "add --tokens FILE (or --token-keys FILE), or pass --anonymous control on purpose")
        }
    }

    /// True for `127.0.0.0/8` and `::1` (in any spelling); the host is an IP literal.
    static func isLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }

    /// `--listen`'s value read by the core's `HostPort`, its problems worded for the flag.
    static func listenAddress(_ text: String, flag: String = "--listen") throws(CommandLineSpec.UsageError) -> HostPort {
        switch HostPort.parse(text) {
        case .success(let address): return address
        case .failure(.badBrackets): throw CommandLineSpec.UsageError("\(flag) wants HOST:PORT or [IPv6]:PORT, not '\(text)'")
        case .failure(.noPort): throw CommandLineSpec.UsageError("\(flag) wants HOST:PORT, not '\(text)'")
        case .failure(.badHostOrPort):
            throw CommandLineSpec.UsageError("\(flag) wants HOST:PORT with a port from 0 to 65535, not '\(text)'")
        }
    }

    /// The daemon binds IP literals only (no resolver runs on the loop); the
    /// one name everybody types is translated, any other is a usage error.
    static func listenHost(_ host: String, flag: String = "--listen") throws(CommandLineSpec.UsageError) -> String {
        if host == "localhost" { return "127.0.0.1" }
        let isIPv4 = host.allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) }
        let isIPv6 = host.contains(":") && host.allSatisfy { $0 == ":" || $0 == "." || $0.isHexDigit }
        guard isIPv4 || isIPv6 else {
            throw CommandLineSpec.UsageError(
                "\(flag) wants an IP address such as 127.0.0.1 or [::1] (or localhost), not '\(host)'")
        }
        return host
    }

    /// `$XDG_STATE_HOME/navsync/state.json`, else under `~/.local/state`.
    static func defaultStatePath(_ environment: [String: String]) -> String {
        if let base = environment["XDG_STATE_HOME"], base.hasPrefix("/") {
            return base + "/navsync/state.json"
        }
        let home = environment["HOME"] ?? "/root"
        return home + "/.local/state/navsync/state.json"
    }
}
