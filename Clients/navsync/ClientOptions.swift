import GNUFlags
import NavSyncClient
import NavSyncCore

/// What `navsync` was asked to do, read from its arguments and environment.
/// Anything wrong here is a usage error: exit status 64 and a one-line hint.
struct ClientOptions {
    enum Mode: Equatable {
        /// The full-screen client; `explicit` when `ui` was typed rather than implied.
        case ui(explicit: Bool)
        /// One request, one reply, printed the way `OneShot.Format` says.
        case oneShot(ClientRequest, OneShot.Format)
        case watch(WatchLimits)
        /// Protocol lines sent as they are, every line the daemon sends printed;
        /// nil reads the lines from stdin.
        case raw([String]?)
    }

    /// When `navsync watch` stops by itself.
    struct WatchLimits: Equatable {
        /// Stop after this many changes (the `state` lines do not count).
        var count: Int?
        /// Stop after this many milliseconds.
        var timeoutMilliseconds: UInt64?
    }

    /// Tried in turn (several daemons sharing a backplane).
    var endpoints = [Endpoint.defaultAddress]
    /// Empty means main; several only for `watch`.
    var rooms: [String] = []
    var tokenPath: String?
    /// `--tls-ca` or `$NAVSYNC_TLS_CA`: roots trusted for `tls://` addresses besides the system's.
    var tlsCA: String?
    var mode: Mode = .ui(explicit: false)
    /// Keep trying a daemon that has not answered yet instead of giving up after one attempt.
    var retry = false
    var wantsHelp = false
    var wantsVersion = false
    /// `--name`: the display name the terminal client and `watch` give themselves.
    var name: String?

    /// The one room of every mode but `watch`.
    var room: String? { rooms.first }

    static let spec = CommandLineSpec(
        valued: ["connect", "unix", "room", "token-file", "tls-ca", "count", "timeout", "name"],
        switches: ["help", "version", "retry"],
        shortAliases: ["h": "help"])

    static let usage = """
        usage: navsync [--connect HOST:PORT[,HOST:PORT...] | --unix PATH] [--room ROOM] [--token-file FILE]
               [--tls-ca FILE] [--name NAME] [--retry] [COMMAND]

        commands:
          (none), ui            full-screen client (needs a terminal)
          get                   print the route, e.g. /green/blue
          state                 print the revision and the route, e.g. 4 /green/blue
          select NAME [DATA]    the stack becomes just this screen; prints the new revision
          push NAME [DATA]      present NAME on top; prints the new revision
          pop                   dismiss the top screen
          root                  back to the bottom screen
          next [DATA]           replace the top screen by its next one
          open ROUTE            deep link, e.g. /red/blue:hello%20there
          present NAME [DATA]   show NAME as a sheet over everything; prints the new revision
          dismiss               remove the topmost sheet
          if REV COMMAND ...    the change only if the room is still at REV (else ERR conflict)
          watch                 print REV state ROUTE, then REV OP ROUTE per change; reconnects
            --count N           stop after N changes
            --timeout SECONDS   stop after this long (exit 1 if --count was not reached)
            --room A --room B   several rooms, each line starting with its room
          screens               list the catalog: name color next data title
          stats                 the daemon's figures: key value
          rooms                 the rooms that hold state: name revision route
          who                   the room's members: NAME ROLE following, or NAME ROLE at ROUTE
          ping [TEXT]           PONG [TEXT]
          raw [LINE...]         send protocol lines as they are and print every reply line;
                                with no LINE, the lines come from stdin (type them, Ctrl-D ends)
          keygen --kid KID [--alg ed25519|hs256] FILE
                                make a signing key: the minting line goes to FILE (0600,
                                never overwritten), the daemon's --token-keys line to stdout
          token --signing-key FILE --role control|view --rooms ROOMS [--name NAME]
                [--ttl DURATION] [--audience AUD] [--kid KID]
                                print a signed token (JWT); ROOMS * or a comma list;
                                DURATION 90s, 45m, 8h (default) or 7d
          link --signing-key FILE --url BASE --room ROOM [--role view|control] [--name NAME]
               [--ttl DURATION] [--audience AUD] [--kid KID] [--display] [--qr|--no-qr]
                                print a link to the web page carrying a signed token, and a
                                QR code of it (default when stdout is a terminal)

        options:
          --connect HOST:PORT   daemon address (default $NAVSYNC_ADDR, else 127.0.0.1:7878;
                                $NAVSYNC_ADDR may also be unix:PATH); a comma-separated
                                list (daemons sharing a backplane) is tried in turn;
                                tls://HOST:PORT is reached over TLS, its certificate
                                checked against HOST
          --unix PATH           connect to a Unix domain socket instead
          --room ROOM           work in this room (default main)
          --token-file FILE     authenticate with the first line of FILE
          --tls-ca FILE         trust the PEM certificates in FILE for tls:// addresses,
                                besides the system's (default $NAVSYNC_TLS_CA)
          --name NAME           the name others see for the terminal client and watch
                                (default: the token's name, else $USER)
          --retry               keep trying a daemon that cannot be reached yet (one-shot
                                commands and watch otherwise give up after one attempt)
          -h, --help            this text
          --version             print the version

        exit status: 0 done, 1 refused by the daemon (its ERR line on stderr) or
        daemon unreachable, 64 usage error
        """

    static func parse(_ arguments: [String], environment: [String: String]) throws(CommandLineSpec.UsageError) -> ClientOptions {
        let parsed = try spec.parse(arguments)
        var options = ClientOptions()
        options.wantsHelp = parsed.has("help")
        options.wantsVersion = parsed.has("version")

        let connect = parsed.last("connect")
        let unix = parsed.last("unix")
        switch (connect, unix) {
        case (_?, _?):
            throw CommandLineSpec.UsageError("--connect and --unix cannot be used together")
        case (let address?, nil):
            options.endpoints = try endpoints(address, source: "--connect")
            if options.endpoints.contains(where: { if case .unix = $0 { true } else { false } }) {
                throw CommandLineSpec.UsageError("--connect wants HOST:PORT; use --unix for a socket path")
            }
        case (nil, let path?):
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--unix needs a path") }
            options.endpoints = [.unix(path: path)]
        case (nil, nil):
            if let address = environment["NAVSYNC_ADDR"], !address.isEmpty {
                options.endpoints = try endpoints(address, source: "$NAVSYNC_ADDR")
            }
        }

        for room in parsed.values("room") {
            guard Names.isValid(room) else {
                throw CommandLineSpec.UsageError("--room wants 1-64 characters of A-Z a-z 0-9 _ . -, not '\(room)'")
            }
            if !options.rooms.contains(room) { options.rooms.append(room) }
        }
        options.retry = parsed.has("retry")
        if let path = parsed.last("tls-ca") {
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--tls-ca needs a file") }
            options.tlsCA = path
        } else if let path = environment["NAVSYNC_TLS_CA"], !path.isEmpty {
            options.tlsCA = path
        }
        if let name = parsed.last("name") {
            guard Names.isValidMemberName(name) else {
                throw CommandLineSpec.UsageError("--name wants 1-64 characters of A-Z a-z 0-9 _ . @ -, not '\(name)'")
            }
            options.name = name
        }
        if let path = parsed.last("token-file") {
            guard !path.isEmpty else { throw CommandLineSpec.UsageError("--token-file needs a path") }
            options.tokenPath = path
        }
        options.mode = try mode(parsed.positionals)
        var limits = WatchLimits()
        if let text = parsed.last("count") {
            limits.count = try CommandLineSpec.positiveInt(text, flag: "count")
        }
        if let text = parsed.last("timeout") {
            guard let seconds = Double(text), seconds > 0, seconds < 1e9 else {
                throw CommandLineSpec.UsageError("--timeout wants a number of seconds above 0, not '\(text)'")
            }
            limits.timeoutMilliseconds = UInt64((seconds * 1000).rounded(.up))
        }
        if case .watch = options.mode {
            options.mode = .watch(limits)
        } else {
            if limits != WatchLimits() { throw CommandLineSpec.UsageError("--count and --timeout go with watch") }
            if options.rooms.count > 1 { throw CommandLineSpec.UsageError("several --room only go with watch") }
        }
        if case .raw = options.mode, options.retry {
            throw CommandLineSpec.UsageError("--retry does not go with raw")
        }
        return options
    }

    /// `Endpoint.parseList`, its error as a usage error.
    private static func endpoints(_ text: String, source: String) throws(CommandLineSpec.UsageError) -> [Endpoint] {
        do throws(Endpoint.ParseError) {
            return try Endpoint.parseList(text, source: source)
        } catch {
            throw CommandLineSpec.UsageError(error.message)
        }
    }

    private static func mode(_ words: [String]) throws(CommandLineSpec.UsageError) -> Mode {
        guard let command = words.first else { return .ui(explicit: false) }
        let args = Array(words.dropFirst())
        switch command {
        case "ui":
            guard args.isEmpty else { throw CommandLineSpec.UsageError("ui takes no arguments") }
            return .ui(explicit: true)
        case "watch":
            guard args.isEmpty else { throw CommandLineSpec.UsageError("watch takes no arguments") }
            return .watch(WatchLimits())
        case "raw":
            if args.contains(where: RequestArguments.holdsLineBreak) {
                throw CommandLineSpec.UsageError("raw: an argument holds a line break; give each line as its own argument")
            }
            return .raw(args.isEmpty ? nil : args)
        case "get":
            return .oneShot(try request(command, args), .route)
        case "state":
            return .oneShot(try request("get", args, named: "state"), .revisionAndRoute)
        case "if":
            guard let revText = args.first, let change = args.dropFirst().first else {
                throw CommandLineSpec.UsageError("if needs a revision and a change, such as: if 4 push blue")
            }
            guard revText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let revision = UInt64(revText) else {
                throw CommandLineSpec.UsageError("if wants a revision (a whole number), not '\(revText)'")
            }
            let inner = try request(change, Array(args.dropFirst(2)))
            guard inner.verb.row.isMutation else {
                throw CommandLineSpec.UsageError("if guards a change (select push pop root next open present dismiss), not \(change)")
            }
            return .oneShot(try checked(.guarded(revision: revision, change: inner), "if"), .revision)
        default:
            let request = try request(command, args)
            switch request.expectation {
            case .ok: return .oneShot(request, .revision)
            case .state: return .oneShot(request, .route)
            case .listing: return .oneShot(request, request.verb == .who ? .members : .listing)
            case .identity: return .oneShot(request, .listing)
            case .pong: return .oneShot(request, .pong)
            }
        }
    }

    /// The request a one-shot command word stands for.
    private static func request(_ command: String, _ args: [String], named: String? = nil)
        throws(CommandLineSpec.UsageError) -> ClientRequest {
        let shown = named ?? command
        /// Everything after the screen name is the data, as on the wire.
        func data(_ rest: ArraySlice<String>) -> String? {
            rest.isEmpty ? nil : rest.joined(separator: " ")
        }
        func none() throws(CommandLineSpec.UsageError) {
            guard args.isEmpty else { throw CommandLineSpec.UsageError("\(shown) takes no arguments") }
        }
        let request: ClientRequest
        switch command {
        case "get": try none(); request = .get
        case "screens": try none(); request = .screens
        case "stats": try none(); request = .stats
        case "rooms": try none(); request = .rooms
        case "who": try none(); request = .who
        case "pop": try none(); request = .pop
        case "root": try none(); request = .root
        case "ping": request = .ping(data(args[...]) ?? "")
        case "select", "push", "present":
            guard let name = args.first else { throw CommandLineSpec.UsageError("\(command) needs a screen name") }
            let rest = data(args.dropFirst())
            request = command == "select" ? .select(screen: name, data: rest)
                : command == "push" ? .push(screen: name, data: rest) : .present(screen: name, data: rest)
        case "dismiss": try none(); request = .dismiss
        case "next":
            request = .next(data: data(args[...]))
        case "open":
            guard args.count == 1 else { throw CommandLineSpec.UsageError("open needs exactly one route, such as /red/blue") }
            request = .open(route: args[0])
        default:
            throw CommandLineSpec.UsageError("unknown command '\(command)'")
        }
        return try checked(request, shown)
    }

    private static func checked(_ request: ClientRequest, _ shown: String) throws(CommandLineSpec.UsageError) -> ClientRequest {
        if let problem = request.problem { throw CommandLineSpec.UsageError("\(shown): \(problem)") }
        return request
    }
}
